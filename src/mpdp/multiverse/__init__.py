"""Robustness of the claims' verdicts to the reconstructed (``[REC]``) choices (issue 38).

A *universe* is the pipeline's claims tables built with the config's ``multiverse.base``
overrides and at most one declared alternative value (:mod:`.spec`); the default universe has
none. Each universe runs in its own folder (:mod:`.universe`); :mod:`.collect` compares every
alternative's verdicts with the default's, :mod:`.figure` draws claims × choices and
:mod:`.section` words the report's "Robustness to reconstructed choices". Cross-study: this
package reads the claims tables only, never ``mpdp.studies``.
"""
