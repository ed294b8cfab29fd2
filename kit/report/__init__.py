"""What a run leaves behind: figures (``plots``), result tables (``tables``), ``results.json`` with its
provenance (``record``), the reports index (``index``), and ``notebook.start``, which every notebook calls first."""
