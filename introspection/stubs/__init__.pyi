# The gi package as type checkers see it beside the Sandbox stubs: every
# other name is left to the runtime (Any).
# SPDX-License-Identifier: LGPL-2.1-or-later

from typing import Any

def __getattr__(name: str) -> Any: ...
