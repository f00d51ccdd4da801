"""The human-evaluation kit (``wikiref humaneval``): the papers' manual studies, declared, sampled, served, scored.

* :mod:`.studies`: the five studies (questions, scales, the papers' published numbers);
* :mod:`.sampling`: seeded, stratified samples from other stages' declared files (A/B hidden per item);
* :mod:`.sheets`: the raters' files (web page JSON, CSV sheets): checks that name the rater and the item;
* :mod:`.server`: the loopback-only rating page (standard library ``http.server``);
* :mod:`.scoring`: the tables (means, win/tie/loss, paired bootstrap, Krippendorff's alpha);
* :mod:`.stage`: the workflow jobs ``sample`` and ``score``.
"""
