"""Result tables: "mean ± std" cells, one row per method over seeds, and the titled tables file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from kit.core.files import write_text_atomic


def mean_std(values, digits: int = 2) -> str:
    """ "mean ± std" with the sample std (ddof 1); a single value is shown alone."""
    v = np.asarray(values, dtype=float)
    return f"{v.mean():.{digits}f} ± {v.std(ddof=1):.{digits}f}" if len(v) > 1 else f"{v[0]:.{digits}f}"


def summarize(results: pd.DataFrame, metrics: tuple[str, ...]) -> pd.DataFrame:
    """One row per ``method`` (in row order, labelled by its ``label``): the number of seeds and each
    metric as mean ± std over seeds; Spearman, hit rates and chance x100 with 2 decimals, others with 3."""
    out = []
    for _, grp in results.groupby("method", sort=False):
        row = {"method": grp["label"].iloc[0], "seeds": len(grp)}
        for m in metrics:
            percent = m.startswith(("spearman", "hit_at", "chance"))
            row[m] = mean_std(grp[m].to_numpy() * (100 if percent else 1), 2 if percent else 3)
        out.append(row)
    return pd.DataFrame(out)


def write_tables(report_dir: Path, tables: dict[str, pd.DataFrame]) -> dict:
    """``results_table.txt`` (every table, titled; the batch runner prints it) and the tables as
    records for ``results.json``."""
    text = "\n\n".join(f"{title}\n{table.to_string(index=False)}" for title, table in tables.items())
    write_text_atomic(Path(report_dir) / "results_table.txt", text)
    return {title: table.to_dict("records") for title, table in tables.items()}
