"""nbgrader settings of the instructor's own JupyterLab in a course without nbgrader's exchange
(local, or collected from an LMS): what formgrader needs on top of the course's
nbgrader_config.py, which is loaded after this file and wins where both set something.

The server is started in the course folder (its working directory is the course root), with
this folder on JUPYTER_CONFIG_PATH and the course folder as its root (see README.md here).
"""

import os

c = get_config()  # noqa: F821 - injected by traitlets when this file is loaded

# Formgrader warns (and logs at every page) that /usr/local/share/nbgrader/exchange is missing
# when a course does not use the exchange. An empty exchange folder inside the course answers
# its check; nothing is released or collected through it in a local or LMS course.
EXCHANGE = os.path.join(os.getcwd(), "exchange")
os.makedirs(EXCHANGE, exist_ok=True)
c.Exchange.root = EXCHANGE
