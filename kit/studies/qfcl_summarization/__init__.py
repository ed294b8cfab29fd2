"""Study 3 (``notebooks/qfcl_summarization.ipynb``): QFCL (Zhang et al. 2022), a seq2seq question
summarizer with MoCo contrastive losses at the encoder and decoder and focus-driven hard negatives.

``focus`` finds question focus and builds hard negatives, ``moco`` holds the key encoder and queue,
``objective`` the QFCL loss, ``seq2seq`` the summarizer, generation, per-question ROUGE, probes and the
CHQ encoder as a sentence encoder, ``train`` the fine-tuning loop, ``params`` the rows, parameters and split,
``suite`` the test split as ROUGE tasks for the paired comparisons (``kit.evaluation.rows``), ``study`` the
cached runs, tables and comparisons."""

from kit.report.index import StudyAbout
from kit.studies.qfcl_summarization.params import QFCLParams as Params
from kit.studies.qfcl_summarization.study import Study

ABOUT = StudyAbout(
    "Study 3: QFCL question summarization",
    "Do encoder- and decoder-side contrastive losses with focus-driven hard negatives improve "
    "medical question summaries over plain fine-tuning?",
    "similarity_curves",
)

__all__ = ["ABOUT", "Params", "Study"]
