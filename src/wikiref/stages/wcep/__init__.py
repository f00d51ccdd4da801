"""WCEP (Gholipour Ghalandari et al., ACL 2020): multi-document news summarisation examples from the
Wikipedia Current Events Portal, on the common example schema (query = the event's category and story
path). Modules: :mod:`~wikiref.stages.wcep.events` (the portal's event model and what its parsers share),
:mod:`~wikiref.stages.wcep.portal_wikitext` / :mod:`~wikiref.stages.wcep.portal_html` (the parsers: daily
wikitext pages of a dump, monthly HTML pages), :mod:`~wikiref.stages.wcep.portal_render` (writing both
layouts), :mod:`~wikiref.stages.wcep.ccnews` (candidate articles from local
CC-NEWS WARC files), :mod:`~wikiref.stages.wcep.classifier` (the article-summary logistic regression of
§3), :mod:`~wikiref.stages.wcep.baselines` / :mod:`~wikiref.stages.wcep.evaluation` (the §5 protocol,
oracles and baselines), :mod:`~wikiref.stages.wcep.fragments` (coverage and density of Grusky et al.),
:mod:`~wikiref.stages.wcep.standin` (the STAND-IN portal and CC-NEWS archive of the offline sample) and
:mod:`~wikiref.stages.wcep.stage` (the jobs)."""
