"""medcse study kit: contrastive sentence representation learning on biomedical text.

The package holds every reusable piece; the notebooks under ``notebooks/`` call it
and ``python -m kit.batch`` runs them into HTML reports.
"""

__version__ = "0.1.0"
