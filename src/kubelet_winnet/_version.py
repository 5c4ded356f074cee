"""The version number, in one place: pyproject.toml reads it (``[tool.setuptools.dynamic]``)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
