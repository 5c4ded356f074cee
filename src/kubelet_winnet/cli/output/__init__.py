"""The writers of what the commands show: audit's text, JSON and CSV (``audit_report``),
the audit page (``audit_page``) and ``node``'s report (``node_report``)."""

__all__: list[str] = []
