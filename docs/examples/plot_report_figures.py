"""
A report's figures
==================

:func:`~odtstudy.study.make_report` turns a study's records into
``report.md`` and a self-contained ``report.html``, with its figures as PNG
and SVG files beside them. This runs the tiny study of the previous example
(seconds) and shows one of its figures.
"""

import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from odtstudy.study import load_config, make_report, run_study

STUDY = """
[study]
name = "tiny"
datasets = ["zoo-1", "uci/iris"]
methods = ["dl85", "dl85-numeric", "cart"]
depths = [2, 3]
folds = 2
seeds = [0]
time_limit = 5
max_thresholds = 4
workers = 1
"""

folder = Path(tempfile.mkdtemp())
(folder / "tiny.toml").write_text(STUDY)
run_study(load_config(folder / "tiny.toml"), output_dir=folder, quiet=True)
report = make_report("tiny", output_dir=folder)
print(report.name, "and", sorted(p.name for p in report.parent.glob("*.png")))

# %%
# The report's sections, in order:
for line in report.read_text().splitlines():
    if line.startswith("## "):
        print(line)

# %%
# Each method keeps one colour and one marker in every figure. Here is
# ``test_accuracy.png``, mean held-out accuracy against depth:
image = mpimg.imread(report.parent / "test_accuracy.png")
fig, ax = plt.subplots(figsize=(8, 8 * image.shape[0] / image.shape[1]))
ax.imshow(image)
ax.set_axis_off()
fig.tight_layout()
plt.show()
