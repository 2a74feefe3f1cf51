"""
A report's figures
==================

:func:`~odtstudy.study.make_report` turns a study's records into
``report.md`` and a self-contained ``report.html``, with its figures as PNG
and SVG files beside them. Here the built-in ``quick`` study runs at its
``smoke`` scale (two data sets, two folds), cut by keyword overrides to three
methods and two depths, and the report shows one of its figures.
"""

import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from odtstudy.study import load_config, make_report, run_study

config = load_config(
    "quick", scale="smoke", methods=["dl85", "dl85-numeric", "cart"], depths=[2, 3]
)
print(config.name, config.scale, config.datasets, config.folds, "folds")
folder = Path(tempfile.mkdtemp())
run_study(config, output_dir=folder, quiet=True)
report = make_report("quick", output_dir=folder, scale="smoke")
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
