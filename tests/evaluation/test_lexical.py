"""The lexical anchors against hand computations: TF-IDF cosine from its formula, BM25 from Lucene's, on toy tasks;
then in kit.evaluate's suite, with intervals, outside the family."""

import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from kit.data.biosses import STSPairs
from kit.evaluation.lexical import Lexical, bm25_similarities
from kit.evaluation.retrieval import RetrievalTask, ndcg_at_k
from kit.evaluation.sts import BIOSSES, STSTask
from kit.evaluation.suite import evaluate

REFERENCE = [
    "the patient had a fever",
    "the fever went down after aspirin",
    "aspirin lowers the risk of stroke",
    "stroke patients need care",
    "care after surgery lowers the risk",
]
FIRST = ["the patient had a fever", "aspirin lowers risk", "surgery care", "stroke risk"]
SECOND = ["a fever in the patient", "the risk of stroke", "care of patients", "stroke lowers risk of fever"]
GOLD = [4.0, 1.0, 2.0, 3.0]


def words(text):
    return [w for w in text.lower().split() if len(w) > 1]  # scikit-learn's default tokens: two letters or more


def tfidf(text):
    """Smoothed idf = ln((1 + N) / (1 + df)) + 1 over the reference, raw counts, l2-normalised."""
    df = Counter(w for t in REFERENCE for w in set(words(t)))
    vocab = sorted(df)
    idf = {w: math.log((1 + len(REFERENCE)) / (1 + df[w])) + 1 for w in vocab}
    counts = Counter(words(text))
    v = np.array([counts[w] * idf[w] for w in vocab])
    return v / max(np.linalg.norm(v), 1e-12)


def test_tfidf_cosine_on_a_toy_sts_task_is_the_formula():
    task = STSTask("toy-sts", "toy", BIOSSES, "all", "-", load=lambda: STSPairs(FIRST, SECOND, GOLD, None, "toy"))
    anchor = Lexical("tfidf", reference=lambda: REFERENCE)
    scores = anchor.score_task(task)["spearman"]
    cos = [float(tfidf(a) @ tfidf(b)) for a, b in zip(FIRST, SECOND)]
    assert scores.value == pytest.approx(stats.spearmanr(cos, GOLD).statistic)
    assert np.allclose(scores.outputs[0], stats.rankdata(cos) / len(cos))


def bm25(query, docs, k1=1.5, b=0.75):
    """Lucene's BM25 (since Lucene 8 without the constant factor k1 + 1, as bm25s): the sum over the query's words of
    ln(1 + (N - df + 0.5) / (df + 0.5)) x tf / (tf + k1 (1 - b + b |d| / avgdl)), stopwords removed."""
    from bm25s.stopwords import STOPWORDS_EN as stop

    toks = [[w for w in words(d) if w not in stop] for d in docs]
    avgdl = np.mean([len(t) for t in toks])
    n = len(docs)
    out = []
    for t in toks:
        tf = Counter(t)
        score = 0.0
        for w in set(words(query)) - set(stop):
            df = sum(w in set(x) for x in toks)
            if df:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf[w] / (tf[w] + k1 * (1 - b + b * len(t) / avgdl))
        out.append(score)
    return np.array(out)


def test_bm25_on_a_toy_retrieval_task_is_lucenes_formula():
    queries = ["fever patient", "stroke risk", "care surgery patients"]
    targets = ["a fever in the patient", "the risk of stroke", "care of patients after surgery"]
    task = RetrievalTask("toy-retrieval", "toy", BIOSSES, "all", "-", load=lambda: (queries, targets))
    candidates = task.texts()[1]
    got = Lexical("bm25").score_task(task)["ndcg_at_10"]
    ranks = []
    for q, relevant in zip(queries, task.pool[2]):
        s = bm25(q, candidates)
        ranks.append([1 + int((s > s[r]).sum()) for r in relevant])
    assert np.allclose(got.outputs[0], ndcg_at_k(np.array(ranks, dtype=float), 10))
    want = [bm25(q, candidates) for q in queries]  # the scores themselves, not only their order
    assert np.allclose(bm25_similarities(queries, candidates)(slice(0, 3)), want, atol=1e-5)


def test_anchors_apply_to_english_pair_and_retrieval_tasks_only():
    from kit.evaluation.tasks import TASKS

    tfidf_anchor, bm25_anchor = Lexical("tfidf"), Lexical("bm25")
    assert tfidf_anchor.applies(TASKS["biosses-all"]) and not bm25_anchor.applies(TASKS["biosses-all"])
    assert tfidf_anchor.applies(TASKS["doid-definition-name"]) and bm25_anchor.applies(TASKS["doid-definition-name"])
    zh = [t for t in TASKS.values() if t.language != "en"]
    assert zh and not any(tfidf_anchor.applies(t) or bm25_anchor.applies(t) for t in zh)
    with pytest.raises(ValueError, match="anchor must be one of"):
        Lexical("bow")


def test_the_suite_scores_anchors_with_intervals_outside_the_family(tiny_encoder):
    task = STSTask("toy-sts", "toy", BIOSSES, "all", "-", load=lambda: STSPairs(FIRST, SECOND, GOLD, None, "toy"))
    anchor = Lexical("tfidf", reference=lambda: REFERENCE)
    result = evaluate({"tiny": tiny_encoder.encode}, [task], resamples=200, anchors=[anchor])
    (r,) = result.tasks
    e = r.anchors["tfidf"]
    assert e.low <= e.value <= e.high and e.value == pytest.approx(anchor.score_task(task)["spearman"].value)
    assert ("tiny", "tfidf") in r.anchored and not r.adjusted  # compared, but no member of the family
    rows = result.rows()
    assert [row["model"] for row in rows] == ["tiny", "tfidf (lexical anchor)"]
    assert "against the best bag-of-words anchor" in result.regime("tiny")
    assert result.to_dict()["tasks"]["toy-sts"]["anchors"]["tfidf"]["value"] == pytest.approx(e.value)
