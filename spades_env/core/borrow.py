"""`borrow(array)`: the same array inside a kernel, without reference counting.

Numba counts references to every array it passes between functions, with an atomic
increment and decrement each time; a kernel that steps thousands of games through small
helpers spends most of its time on them. An array the caller keeps alive for the whole
call needs no counting: `borrow` returns a view whose meminfo is null, so every view and
slice taken from it costs nothing. Use it only for arrays that do not outlive the call
(never return or store a borrowed array).
"""

from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def borrow(typingctx, arr):
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(arr)(context, builder, value=args[0])
        ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
        ary.parent = cgutils.get_null_value(ary.parent.type)
        return ary._getvalue()

    return arr(arr), codegen
