"""Study 3 (``notebooks/qfcl_summarization.ipynb``): QFCL (Zhang et al. 2022), a seq2seq question
summarizer with MoCo contrastive losses at the encoder and decoder and focus-driven hard negatives.

``focus`` finds question focus and builds hard negatives, ``moco`` holds the key encoder and queue,
``objective`` the QFCL loss, ``seq2seq`` the summarizer, generation, the similarity probe and the CHQ
encoder as a sentence encoder, ``train`` the fine-tuning loop, ``params`` the rows, parameters and split,
``study`` the cached runs, tables and comparisons, ``report`` the report's prose and record. ROUGE and the
test split as ROUGE tasks for the paired comparisons are scoring, in ``kit.evaluation.summarization``."""

from kit.report.index import StudyAbout
from kit.studies.qfcl_summarization.params import QFCLParams as Params
from kit.studies.qfcl_summarization.study import Study
from kit.study import STUDIES, StudyEntry

ABOUT = StudyAbout(
    "Study 3: QFCL question summarization",
    "Do encoder- and decoder-side contrastive losses with focus-driven hard negatives improve "
    "medical question summaries over plain fine-tuning?",
    "similarity_curves",
)
STUDIES.add(StudyEntry("qfcl_summarization", Params, Study, ABOUT))

__all__ = ["ABOUT", "Params", "Study"]
