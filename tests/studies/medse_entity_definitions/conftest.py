import pytest

from kit.data import EntityEntry


@pytest.fixture(scope="session")
def entries() -> list[EntityEntry]:
    """A four-entry ontology: a name inside a longer name, a synonym, an abbreviation, a stop-word synonym."""
    return [
        EntityEntry(
            "D:1", "breast cancer", ("mammary carcinoma",), "A thoracic cancer that originates in the mammary gland."
        ),
        EntityEntry("D:2", "cancer", (), "A disease of cellular proliferation that is malignant."),
        EntityEntry("D:3", "acute lymphoblastic leukemia", ("ALL",), "A lymphoid leukemia of immature lymphocytes."),
        EntityEntry("D:4", "hemangiosarcoma", ("is",), "A vascular cancer."),
    ]
