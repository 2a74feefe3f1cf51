"""DL8.5's search engine: the Cython search cores and their Python door.

Estimators reach a search through :func:`~odtstudy.dl85.engine._door.fit_search`
only: it picks the 0/1 search over bitsets (``_search``), the threshold
columns or the numeric search (``_numeric``), merges the options once and
returns the result. Inside: the objective plug-in that prices leaves
(``_objective``), the shared recursion (``_skeleton``), the depth-2 solvers
(``_depth2*``), the caches (``_cache``, ``_boxcache``, ``_cache_policy``) and
the exact sums and certificates of the regression objectives.
"""
