import numpy as np
import pytest

from kit.core.whitening import Whitening


def test_whitening_gives_identity_covariance_on_its_fitting_data():
    x = np.random.default_rng(0).normal(size=(500, 8)) @ np.random.default_rng(1).normal(size=(8, 8)) + 3.0
    w = Whitening.fit(x)
    z = w(x).astype(np.float64)
    np.testing.assert_allclose(np.cov(z.T, bias=True), np.eye(8), atol=1e-4)
    np.testing.assert_allclose(z.mean(0), 0, atol=1e-4)
    assert Whitening.fit(x, dim=3)(x).shape == (500, 3)
    with pytest.raises(ValueError, match="more fitting embeddings"):
        Whitening.fit(x[:5])
