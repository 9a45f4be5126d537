"""Extractors that misbehave on purpose, for the process-isolation tests (they run in child processes).

Each reads its instruction from the bytes: ``ok`` returns a one-block document, ``slow`` sleeps past
any budget, ``hog`` allocates memory until stopped, ``crash`` ends its process, ``boom`` raises.
"""

from __future__ import annotations

import os
import time

from secondbrain.errors import PermanentError
from services.extractors.document import Block, Extracted, ExtractionContext


class Misbehaving:
    modality = "office"

    def __init__(self, greeting: str = "hello") -> None:
        self.greeting = greeting
        self.pid = os.getpid()

    def extract(self, raw: bytes, ctx: ExtractionContext) -> Extracted:
        what = raw.decode()
        if what == "slow":
            time.sleep(3600)
        if what == "hog":
            hoard = []
            while True:
                hoard.append(bytearray(16 * 1024 * 1024))
                time.sleep(0.01)
        if what == "crash":
            os._exit(3)
        if what == "refuse":
            raise PermanentError("the test extractor refuses this")
        if what == "boom":
            raise ValueError("a library failed")
        text = f"{self.greeting} from process {self.pid}"
        return Extracted(title=ctx.filename, modality=self.modality, blocks=[Block(text=text, kind="paragraph")])
