"""Model cards for the sentence-transformers folders a study saves (``save_models``), and their upload.

A run saves its models in its own folder (``<run>/models/``), each marked when it is written (``MARK``: its table
row, seed, run and training data, and its place in the report). When the report is recorded, the models of the
runs it used are published in ``<report>/models/`` (``publish``: the folder replaced, its files linked), so that
the report's models are always those its record describes, and each gets its ``README.md`` (``write_cards``):
sentence-transformers' own card
(``generate_model_card``: the Hub's front matter, the architecture, how to load it) with the kit's section after
its title: the base model and what it stands in for, the study, row and seed, the training data and time, the
row's scores on the report's evaluation suite with their intervals and corrected comparisons, the commit and the
command that reproduces it, and every parameter of the run. ``push`` uploads the folders to the Hugging Face Hub
(``kit.batch --push-to-hub``), or with ``dry_run`` writes the cards it would upload and uploads nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from kit.core.files import write_text_atomic
from kit.evaluation.inference import format_p
from kit.report.index import run_file_of
from kit.report.tables import duration, number, signed_interval

MARK = "kit_model.json"
"""Beside a saved model: which row, seed and run made it, and on what data (``mark``)."""
KIT_SECTION = "## How this model was made (medcse study kit)"


MODELS = "models"
"""In a run folder, the sentence-transformers folders its run saved; in a report folder, those of the runs its
record uses, published with their cards."""


def mark(folder: Path, row: str, label: str, seed: int, run: str, data: str, seeds: list[int], place: str) -> None:
    """Record beside a saved model (``folder``) the table ``row`` (and its ``label``) it belongs to, its ``seed``
    (of the row's ``seeds``), the ``run`` folder that trained it, the training ``data`` in words and its ``place``
    under the report's ``models/``."""
    facts = {"row": row, "label": label, "seed": seed, "seeds": list(seeds), "run": run, "data": data, "place": place}
    write_text_atomic(Path(folder) / MARK, json.dumps(facts, indent=1) + "\n")


def publish(report_dir: Path, run_dirs: list[Path]) -> list[Path]:
    """Replace ``report_dir/models`` with the marked models of ``run_dirs``, each at its place; files are hard
    links to the run's (copies where the filesystem cannot link). Returns the published folders."""
    target = Path(report_dir) / MODELS
    if target.exists():
        shutil.rmtree(target)
    published = []
    for run_dir in run_dirs:
        for mark_file in sorted((Path(run_dir) / MODELS).rglob(MARK)):
            place = target / json.loads(mark_file.read_text(encoding="utf-8"))["place"]
            shutil.copytree(mark_file.parent, place, copy_function=_link)
            published.append(place)
    return published


def _link(source: str, destination: str) -> str:
    try:
        os.link(source, destination)
    except OSError:
        shutil.copy2(source, destination)
    return destination


@dataclass(frozen=True)
class SavedModel:
    folder: Path
    facts: dict  # MARK's content


def saved_models(report_dir: Path) -> list[SavedModel]:
    """Every marked model folder under ``report_dir/models``."""
    marks = sorted((Path(report_dir) / MODELS).rglob(MARK))
    return [SavedModel(m.parent, json.loads(m.read_text(encoding="utf-8"))) for m in marks]


def scores_table(record: dict, row: str) -> str:
    """The row's lines of the report's suite (``record['metrics']['suite']``): score x100 with its interval,
    and each comparison with its interval and family-corrected p-value."""
    suite = record.get("metrics", {}).get("suite") or {}
    lines = [line for line in suite.get("lines", []) if line.get("row") == row]
    if not lines:
        return "The report scored this row on no suite task.\n"
    methods = {(line["task"], line["row"]): line["method"] for line in suite["lines"]}
    correction = suite.get("correction", "none")
    premise = (suite.get("control") or {}).get("text") or suite.get("premise")
    out = [
        *([premise, ""] if premise else []),
        f"| task | metric | items | score [{suite.get('confidence', 0.95):.0%}] | compared with | difference [family "
        f"interval] | p ({correction}) |",
        "|---|---|---:|---|---|---|---:|",
    ]
    for line in lines:
        score = f"{number(line['score'])} [{number(line['score_low'])}, {number(line['score_high'])}]".replace("-", "−")
        versus, difference, p = "", "", ""
        if line.get("baseline"):
            versus = methods.get((line["task"], line["baseline"]), line["baseline"])
            tested = line.get("role") in ("control", "primary", "secondary")
            low, high = (line["family_low"], line["family_high"]) if tested else (line["low"], line["high"])
            difference = signed_interval(line["difference"], low, high, 2) if low is not None else ""
            control = line.get("role") == "control"
            star = line.get("significant") if control else line.get("finding", line.get("significant"))
            p = (format_p(line["p_adjusted"]) if tested else f"({line.get('role')})") + (" *" if star else "")
        out.append(
            f"| `{line['task']}` | {line['metric']} | {line['items']} | {score} | {versus} | {difference} | {p} |"
        )
    return "\n".join(out) + "\n"


def kit_section(model: SavedModel, record: dict, run_seconds: float, run_file: str | None) -> str:
    """The kit's part of the card: what the model is, how it was trained, how it scored, how to reproduce it."""
    import yaml

    facts, p = model.facts, record.get("parameters", {})
    commit = record.get("git_commit", "unknown")
    command = (
        f"python -m kit.batch {run_file}"
        if run_file
        else f"papermill notebooks/{record['notebook']}.ipynb out.ipynb -f PARAMS.yaml (this card's parameters)"
    )
    if commit == "unknown" or commit.endswith("-dirty"):
        reproduce = f"`{command}` on the kit's code as it was: the run was made from {commit} code, no commit holds it"
    else:
        reproduce = f"`git checkout {commit[:12]} && {command}`"
    stands_in = record.get("substitute_for")
    rows = [
        ("study", f"`{record['notebook']}`"),
        ("table row", f"{facts['label']} (`{facts['row']}`)"),
        ("seed", f"{facts['seed']}, the first of the row's seeds {facts['seeds']}"),
        ("base model", f"`{p.get('model', '?')}`: {record.get('model', '?')}"),
        *([("stands in for", stands_in)] if stands_in else []),
        ("training data", facts["data"]),
        ("training time", f"{duration(run_seconds)} on {record.get('device', '?')} (its run, scoring included)"),
        ("commit", f"`{commit}`, finished {record.get('finished', '?')}"),
        ("reproduce", reproduce),
    ]
    suite = record.get("metrics", {}).get("suite") or {}
    shown = {k: v for k, v in p.items() if k != "description"}
    return "\n".join(
        [
            KIT_SECTION,
            "",
            "This model is a table row of a medcse study kit report: a reproduction of a published contrastive "
            "method on biomedical text, scored on the kit's evaluation suite with intervals.",
            "",
            "| about the model | |",
            "|---|---|",
            *[f"| {name} | {str(value).replace('|', '/')} |" for name, value in rows],
            "",
            "### Scores on the report's evaluation suite",
            "",
            "Scores x100 over the row's seeds and the task's items (a percentile bootstrap); a difference is paired "
            f"with the row it is compared with, and its interval and p-value are corrected by "
            f"{suite.get('correction', 'none')} over the report's family of comparisons (* significant). The "
            f"checkpoint here is seed {facts['seed']}; the scores are its row's.",
            "",
            scores_table(record, facts["row"]),
            "<details><summary>Every parameter of the run</summary>",
            "",
            "```yaml",
            yaml.safe_dump(shown, sort_keys=False, allow_unicode=True).rstrip(),
            "```",
            "",
            "</details>",
            "",
        ]
    )


def card(model: SavedModel, record: dict, run_seconds: float, run_file: str | None, repo_id: str | None = None) -> str:
    """The model's README.md: sentence-transformers' card for the folder (its name, language and tags set; the
    repository named when it is pushed) with ``kit_section`` after its title."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.model_card import generate_model_card

    from kit.core.models import hub_name

    st = SentenceTransformer(str(model.folder), device="cpu")
    data = st.model_card_data
    label = model.facts["label"].lstrip("+ ")  # a row's label may read "+ random swap 10%"
    data.model_name = f"{label}: {record['notebook']}, seed {model.facts['seed']}"
    data.language = ["zh" if record.get("parameters", {}).get("language") == "zh" else "en"]
    data.add_tags(["medcse", "biomedical", record["notebook"]])
    data.base_model = hub_name(record.get("parameters", {}).get("model", ""))  # "finetuned from" a hub model
    if repo_id:
        data.set_model_id(repo_id)
    text = generate_model_card(st)
    section = kit_section(model, record, run_seconds, run_file)
    head, title, rest = re.split(r"(?m)^(# .*\n)", text, maxsplit=1)
    return f"{head}{title}\n{section}\n{rest.lstrip()}"


def write_cards(report_dir: Path, record: dict, repo: str | None = None) -> list[tuple[SavedModel, Path]]:
    """Write the README.md of every model of the report (``saved_models``) from its ``record`` (``card``; the
    time of each model's run from its ``run_seconds``); ``repo``: the prefix of the repositories they go to
    (``repo_for``). Returns each model and its card."""
    written = []
    for model in saved_models(report_dir):
        seconds = record["run_seconds"][model.facts["run"]]
        repo_id = repo_for(repo, model.facts["row"]) if repo else None
        text = card(model, record, seconds, run_file_of(report_dir), repo_id)
        written.append((model, write_text_atomic(model.folder / "README.md", text)))
    return written


def repo_for(repo: str, row: str) -> str:
    """The Hub repository of a saved model of table row ``row``: ``owner/name-<row>`` (the row's name in the
    characters a repository name allows)."""
    return f"{repo}-{re.sub(r'[^A-Za-z0-9._-]+', '-', row).strip('-.')}"


def push(report_dir: Path, repo: str, dry_run: bool = False) -> list[tuple[str, Path]]:
    """Upload every saved model of the report (``report_dir``, whose ``results.json`` is its record) to
    ``repo_for(repo, row)``, its card written first with the repository named; ``dry_run``: write the cards,
    upload nothing. Returns (repository, card) of each."""
    record = json.loads((Path(report_dir) / "results.json").read_text(encoding="utf-8"))
    uploads = []
    for model, readme in write_cards(report_dir, record, repo):
        repo_id = repo_for(repo, model.facts["row"])
        if not dry_run:
            from huggingface_hub import HfApi

            api = HfApi()
            api.create_repo(repo_id, exist_ok=True)
            api.upload_folder(folder_path=str(model.folder), repo_id=repo_id, commit_message="medcse study kit")
        uploads.append((repo_id, readme))
    return uploads
