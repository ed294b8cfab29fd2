import numpy as np
import pytest
import torch

from kit.core.models import POOLERS, Encoder, masked_mean
from kit.evaluation.geometry import alignment, uniformity
from kit.evaluation.sts import STSEmbeddings

TEXTS = ["IL-6 rose.", "A much longer sentence about Kras G12D-induced lung cancer in mice.", "Short one", "p < 0.05"]


@pytest.fixture(scope="module")
def minilm():
    return Encoder.from_pretrained("minilm", "mean")


def test_minilm_biosses_matches_mteb(minilm, biosses):
    """MTEB's published all-MiniLM-L6-v2 BIOSSES score (all 100 pairs, cosine Spearman) is 0.8164."""
    score = STSEmbeddings.compute(minilm, biosses).spearman("all")
    assert abs(score - 0.8164) < 0.01


@pytest.mark.parametrize("pooler", POOLERS)
def test_save_loads_in_sentence_transformers_with_the_same_embeddings(tmp_path, pooler):
    from sentence_transformers import SentenceTransformer

    enc = Encoder.from_pretrained("tiny-random-bert", pooler, seed=3)
    st = SentenceTransformer(str(enc.save(tmp_path / pooler)), device="cpu")
    np.testing.assert_allclose(st.encode(TEXTS), enc.encode(TEXTS), atol=1e-5)


def test_layer_poolers_are_what_their_names_say():
    enc = Encoder.from_pretrained("tiny-random-bert", "first_last_avg")
    feats = enc.tokenize(TEXTS, 32)
    with torch.no_grad():
        hs = enc.backbone(**feats, output_hidden_states=True).hidden_states
        mask = feats["attention_mask"].unsqueeze(-1).float()
        for pooler, first in (("first_last_avg", hs[1]), ("embed_last_avg", hs[0])):
            enc.pooler = pooler
            expected = (((first + hs[-1]) / 2) * mask).sum(1) / mask.sum(1)
            assert torch.allclose(enc(feats), expected, atol=1e-6)


def test_mlp_only_in_training_for_cls_before_pooler():
    enc = Encoder.from_pretrained("tiny-random-bert", "cls_before_pooler").eval()
    feats = enc.tokenize(TEXTS, 32)
    with torch.no_grad():
        cls = enc.backbone(**feats).last_hidden_state[:, 0]
        assert torch.allclose(enc(feats), cls)
        assert torch.allclose(enc(feats, training_head=True), enc.mlp(cls))


def test_length_sorted_encoding_keeps_input_order():
    enc = Encoder.from_pretrained("tiny-random-bert", "mean")
    together = enc.encode(TEXTS, batch_size=2)
    alone = np.concatenate([enc.encode([t]) for t in TEXTS])
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_unknown_pooler_is_an_error():
    with pytest.raises(ValueError, match="choose one of"):
        Encoder.from_pretrained("tiny-random-bert", "max")


def test_alignment_uniformity_hand_cases():
    x = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert alignment(x, x) == 0.0
    assert alignment(x, -x) == pytest.approx(4.0)
    # two orthogonal unit vectors: ||x-y||^2 = 2, uniformity = log exp(-2*2) = -4
    assert uniformity(x) == pytest.approx(-4.0)


def test_unknown_token_share_shows_minilm_does_not_know_most_chinese(minilm):
    assert minilm.unknown_token_share(["Interleukin-6 levels rose after treatment."]) == 0.0
    assert minilm.unknown_token_share(["糖尿病能根治吗"]) == pytest.approx(6 / 7)  # only 治 is in its vocabulary
    assert minilm.unknown_token_share([]) == 0.0


def test_half_precision_checkpoints_load_as_fp32_for_training(tmp_path):
    tiny = Encoder.from_pretrained("tiny-random-bert")
    tiny.backbone.half().save_pretrained(tmp_path)
    tiny.tokenizer.save_pretrained(tmp_path)
    assert {p.dtype for p in Encoder.from_pretrained(str(tmp_path)).parameters()} == {torch.float32}


def test_sdpa_models_get_the_padding_mask_as_given_4d_and_the_same_embeddings(pubmed):
    enc = Encoder.from_pretrained("tiny-random-bert", "mean", seed=0)
    feats = enc.tokenize(pubmed[:8], 64)
    assert feats["attention_mask"].min() == 0  # the batch has padding, so the mask matters
    four_d = enc._with_sdpa_mask(feats)["attention_mask"]
    assert four_d.shape == (8, 1, 1, feats["attention_mask"].shape[1]) and four_d.dtype == torch.bool
    with torch.no_grad():
        plain = enc.backbone(**feats).last_hidden_state
        given = enc.backbone(**enc._with_sdpa_mask(feats)).last_hidden_state
    real = feats["attention_mask"].bool()
    torch.testing.assert_close(given[real], plain[real])
    enc.backbone.config._attn_implementation = "eager"  # eager attention adds a float mask: left to transformers
    assert enc._with_sdpa_mask(feats) is feats


def test_masked_mean_ignores_masked_tokens_and_gives_zeros_for_an_empty_mask():
    states = torch.tensor([[[1.0], [3.0], [100.0]], [[5.0], [6.0], [7.0]]])
    out = masked_mean(states, torch.tensor([[1, 1, 0], [0, 0, 0]]))
    assert out.tolist() == [[2.0], [0.0]]


@pytest.mark.parametrize(
    "alias, text",
    [
        ("pubmed-bert-mini", "the patients were treated with intravenous antibiotics"),
        ("chineseblue-bert-mini", "慢性胃炎怎么治疗"),
        ("pubmed-bert-small", "the patients were treated with intravenous antibiotics"),
        ("chineseblue-bert-small", "慢性胃炎怎么治疗"),
    ],
)
def test_the_kits_raw_starts_load_offline_by_alias(alias, text):
    """The mini-BERTs that kit.pretrain wrote (committed under models/, fp16, <= 20 MB) load by alias, in
    fp32, with a vocabulary that knows their corpus's words, and come with a model card."""
    from kit.core.models import PRETRAINED_FOLDER, check_available

    check_available(alias)
    folder = PRETRAINED_FOLDER / alias
    assert (folder / "model.safetensors").stat().st_size <= 20e6
    assert "held-out MLM loss" in (folder / "README.md").read_text(encoding="utf-8")
    enc = Encoder.from_pretrained(alias, "cls_before_pooler")
    assert next(enc.parameters()).dtype == torch.float32
    assert enc.source.substitute_for and "kit.pretrain" in enc.source.description
    assert not enc.source.description.startswith(alias)  # the reports write "`alias`: description"
    assert enc.unknown_token_share([text]) == 0.0
    assert enc.encode([text]).shape == (1, enc.dim)


@pytest.mark.parametrize(
    "alias", ["pubmed-bert-mini", "pubmed-bert-small", "chineseblue-bert-mini", "chineseblue-bert-small"]
)
def test_the_kits_raw_starts_hold_only_trained_positions(alias):
    """Pretrained at 48 tokens without packing, rows 48+ of these starts' position tables never got a gradient:
    the folders keep only the trained rows, say so in their config, tokenizer and card, and the first 48 rows are
    not at their initialisation (std 0.02, consecutive rows unrelated) but trained (neighbours alike)."""
    from safetensors import safe_open
    from transformers import AutoConfig

    from kit.core.models import PRETRAINED_FOLDER

    folder = PRETRAINED_FOLDER / alias
    assert AutoConfig.from_pretrained(folder).max_position_embeddings == 48
    assert Encoder.from_pretrained(alias).positions == 48
    assert "Trained positions: 48" in (folder / "README.md").read_text(encoding="utf-8")
    with safe_open(folder / "model.safetensors", "pt") as f:
        table = f.get_tensor("embeddings.position_embeddings.weight").float()
    assert table.shape[0] == 48
    neighbours = torch.nn.functional.cosine_similarity(table[1:-1], table[2:])
    assert neighbours.mean() > 0.2, neighbours.mean()


def test_a_text_beyond_the_trained_positions_is_cut_on_every_path(tmp_path):
    """A model whose table holds 48 positions is read at 48 tokens at most whatever length is asked for: the
    encoder, its ONNX export, the suite's token batches (which count the cut texts) and a saved
    sentence-transformers folder all give the vectors of the text cut at 48 tokens."""
    from sentence_transformers import SentenceTransformer

    from kit.core.models import cut_texts
    from kit.core.onnx_encoder import OnnxEncoder, onnx_available
    from kit.evaluation.embeddings import Embedder

    enc = Encoder.from_pretrained("pubmed-bert-mini", "mean")
    long = "the patients were treated with intravenous antibiotics for ten days " * 8
    short = "aspirin lowers the risk"
    ids = enc.tokenizer(long)["input_ids"]
    assert len(ids) > 60
    cut = enc.tokenizer.decode(ids[1:47])  # 46 tokens + [CLS] and [SEP]: 48
    assert enc.tokenizer(cut)["input_ids"] == ids[:47] + [enc.tokenizer.sep_token_id]
    want = enc.encode([cut, short], max_length=48)
    assert np.allclose(enc.encode([long, short], max_length=256), want, atol=1e-6)
    assert cut_texts(enc.tokenizer, [long, short, cut], 256) == 1
    embedder = Embedder.from_name("pubmed-bert-mini", "mean", use_cache=False, backend="torch")
    assert np.allclose(embedder([long, short]), want, atol=1e-5) and embedder.cut == 1
    if onnx_available():
        onnx = OnnxEncoder.from_encoder(enc, cache=tmp_path / "onnx")
        assert np.allclose(onnx.encode([long, short], max_length=256), want, atol=1e-5)
    st = SentenceTransformer(str(enc.save(tmp_path / "st", max_length=256)), device="cpu")
    assert st.max_seq_length == 48
    assert np.allclose(st.encode([long, short]), want, atol=1e-5)


DAMAGES = {  # file of a saved model folder -> new content (from the old), what check_available says after its path
    "model.safetensors": (lambda data: data[:-100], "not a whole safetensors file"),
    "config.json": (lambda data: data[:-20], "not valid JSON"),
    "tokenizer.json": (lambda data: data[: len(data) // 2], "not valid JSON"),
    "modules.json": (lambda data: b"{}", "not a sentence-transformers module list"),
}


@pytest.mark.parametrize("file", DAMAGES, ids=[f"damaged {f}" for f in DAMAGES])
def test_check_available_names_a_damaged_file_of_a_model_folder(tmp_path, tiny_encoder, file):
    """A whole folder passes; one with a file damaged is an OSError naming the file, and no weights are read."""
    from kit.core.models import check_available

    tiny_encoder.backbone.save_pretrained(tmp_path)
    tiny_encoder.tokenizer.save_pretrained(tmp_path)
    (tmp_path / "modules.json").write_text("[]")
    check_available(str(tmp_path))
    damage, message = DAMAGES[file]
    (tmp_path / file).write_bytes(damage((tmp_path / file).read_bytes()))
    with pytest.raises(OSError) as err:
        check_available(str(tmp_path))
    assert str(err.value).startswith(f"{tmp_path / file}: {message}")


def test_architectures_without_sdpa_load_with_eager_attention(tmp_path):
    """MPNet (all-mpnet-base-v2's architecture) has no SDPA path: the kit loads it with eager attention,
    a sentence-transformers folder of it gives the kit the same embeddings, and BERT keeps SDPA."""
    from sentence_transformers import SentenceTransformer, models
    from transformers import MPNetConfig, MPNetModel

    tokenizer = Encoder.from_pretrained("tiny-random-bert").tokenizer
    torch.manual_seed(0)
    shape = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}
    MPNetModel(MPNetConfig(vocab_size=len(tokenizer), **shape)).save_pretrained(tmp_path / "mpnet")
    tokenizer.save_pretrained(tmp_path / "mpnet")
    transformer = models.Transformer(str(tmp_path / "mpnet"))
    pooling = models.Pooling(32, pooling_mode="mean")
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(tmp_path / "st"))

    enc = Encoder.from_pretrained(str(tmp_path / "st"), "mean")
    assert enc.backbone.config._attn_implementation == "eager"
    st = SentenceTransformer(str(tmp_path / "st"), device="cpu")
    np.testing.assert_allclose(enc.encode(TEXTS), st.encode(TEXTS), atol=1e-5)
    assert Encoder.from_pretrained("minilm").backbone.config._attn_implementation == "sdpa"


def test_every_folder_under_models_is_an_alias():
    """A checkpoint committed under models/ is reachable by its folder's name (and no alias lacks its folder)."""
    from kit.core.models import PRETRAINED, PRETRAINED_FOLDER

    assert sorted(PRETRAINED) == sorted(p.name for p in PRETRAINED_FOLDER.iterdir() if p.is_dir())


def test_a_kit_models_fingerprint_reads_its_weights_not_its_card(tmp_path, tiny_encoder, monkeypatch):
    """kit.docs render writes measured numbers into the kit's own model cards: their run keys must not change with
    them. Any other folder keeps its whole digest, so its cached runs keep their keys."""
    import kit.core.models as models

    folder = tmp_path / "toy-bert"
    tiny_encoder.backbone.save_pretrained(folder)
    tiny_encoder.tokenizer.save_pretrained(folder)
    (folder / "README.md").write_text("# a card\n", encoding="utf-8")
    monkeypatch.setattr(models, "PRETRAINED_FOLDER", tmp_path)
    monkeypatch.setitem(models.PRETRAINED, "toy-bert", ("a toy", "nothing"))
    alias, plain = models.model_fingerprint("toy-bert"), models.model_fingerprint(str(folder))
    (folder / "README.md").write_text("# a card\n\nwith a generated paragraph\n", encoding="utf-8")
    assert models.model_fingerprint("toy-bert") == alias and models.model_fingerprint(str(folder)) != plain
    (folder / "config.json").write_text((folder / "config.json").read_text().replace("}", ', "x": 1}', 1))
    assert models.model_fingerprint("toy-bert") != alias
