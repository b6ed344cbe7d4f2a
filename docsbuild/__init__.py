"""Build-time helpers of the documentation site (mkdocs.yml names them; nothing here is installed)."""
