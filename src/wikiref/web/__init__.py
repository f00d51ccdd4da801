"""Getting documents off the web, shared by the stages that fetch or download (collect, qmdscnn, wcep,
resources): the fetch backends (``fetch``: live, Wayback, WARC; ``commoncrawl``; ``hostlimit``), main-text
extraction (``extract``) and resumable, checksummed downloads (``download``)."""
