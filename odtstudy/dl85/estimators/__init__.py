"""DL8.5's scikit-learn estimators: they validate the data and parameters,
describe the problem (objective, thresholds, options) and hand it to the
engine's door (:mod:`odtstudy.dl85.engine`); they never pick a search."""
