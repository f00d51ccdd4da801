"""Wikipedia dumps, shared by every stage that reads one (collect, psg2sum, qmdscnn, qmdsir, wcep, sample,
resources): dump reading and export XML (``dump``), the dump index and its checksums (``index``), the
wikitext parser that finds cited statements (``statements``, ``tokenwalk``)."""
