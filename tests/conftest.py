"""Shared pytest configuration for the course's tests."""


def pytest_configure(config):
    # Registered here because the repository-root pytest.ini belongs to the lead;
    # `pytest -m "not notebooks"` skips the slow tests that start Jupyter kernels.
    config.addinivalue_line(
        "markers", "notebooks: executes notebooks in a real Jupyter kernel (slow)")
