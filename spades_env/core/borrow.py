"""`borrow(array)`: the same array inside a kernel, without reference counting;
`stack_array(n, dtype)`: scratch space on the stack.

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


@intrinsic
def stack_array(typingctx, length, dtype):
    """`stack_array(n, np.uint64)`: an uninitialised (n,) array on the stack of the
    compiled function it ends up in (`n` a constant), freed when that function returns.
    It needs no allocator, so kernels compiled without numba's reference counting
    (`_nrt=False`, no atomic counts around every inlined helper) can use scratch space.
    Never return or store it."""
    if not isinstance(length, types.IntegerLiteral) or not isinstance(dtype, types.NumberClass):
        return None
    n = int(length.literal_value)
    item_type = dtype.instance_type
    array_type = types.Array(item_type, 1, "C")

    def codegen(context, builder, signature, args):
        item = context.get_data_type(item_type)
        size = context.get_constant(types.intp, n)
        data = cgutils.alloca_once(builder, item, size=size)
        ary = context.make_array(array_type)(context, builder)
        itemsize = context.get_constant(types.intp, context.get_abi_sizeof(item))
        context.populate_array(
            ary, data=data, shape=[size], strides=[itemsize], itemsize=itemsize, meminfo=None
        )
        return ary._getvalue()

    return array_type(length, dtype), codegen
