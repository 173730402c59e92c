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

from llvmlite import ir
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


@intrinsic
def prefetch(typingctx, arr, index):
    """`prefetch(a, i)`: ask the CPU to bring the cache line of `a.ravel()[i]` in (for
    writing), without waiting for it: `llvm.prefetch`, a hint that never faults."""
    if not isinstance(arr, types.Array) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(arr)(context, builder, value=args[0])
        ptr = builder.gep(ary.data, [args[1]])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        kind = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, kind, "llvm.prefetch.p0i8")
        # (address, 1 = for a write, 3 = keep in every cache level, 1 = data)
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(1), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.none(arr, index), codegen
