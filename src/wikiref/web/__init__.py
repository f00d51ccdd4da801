"""Getting documents off the web, shared by the stages that fetch or download (collect, qmdscnn, wcep,
resources): the fetch backends (``fetch``: live HTTP, the cache, :func:`~wikiref.web.fetch.make_fetcher`;
``wayback``; ``warc``; ``commoncrawl``; ``hostlimit``), main-text extraction (``extract``) and resumable,
checksummed downloads (``download``)."""
