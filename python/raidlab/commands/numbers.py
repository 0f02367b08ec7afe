"""The number grammar and the click types of number options, under the name commands used
before they moved into the library: the grammar is :mod:`raidlab.numeric`, the click types
:mod:`raidlab.cli_types`. New code imports those."""

from raidlab.cli_types import FiniteFloat, WholeRange, finite, whole
from raidlab.numeric import MAX_WHOLE, real_text, whole_text

__all__ = ["FiniteFloat", "WholeRange", "finite", "whole", "MAX_WHOLE", "real_text", "whole_text"]
