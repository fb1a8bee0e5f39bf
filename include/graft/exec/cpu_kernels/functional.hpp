// graft/exec/cpu_kernels/functional.hpp — the functional family's CPU kernels bound to their TF op types:
// TF2's functional control flow (While / StatelessWhile, If / StatelessIf, Case / StatelessCase run
// their library functions through graft/exec/function_runner.hpp, one runner per body, made on
// the step's first run and kept in its memo), the call frame ops of those bodies, and TensorList
// (graft/exec/tensor_list.hpp).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graft/core/tensor_util.hpp"
#include "graft/exec/function_runner.hpp"
#include "graft/exec/kernel.hpp"
#include "graft/exec/tensor_list.hpp"

namespace graft::exec::kernels {

namespace fn_detail {

/// The runners of one functional node (cond/body, branches), built on first use.
struct runner_cache {
    std::mutex mu;
    std::vector<std::shared_ptr<function_runner>> runners;
};

/// Runner `slot` of this node for function `f` (built on first use). Throws graph_error naming the
/// node when the graph has no library or the function is missing.
inline function_runner& runner(kernel_context& c, std::size_t slot, const func_attr& f) {
    auto cache = c.memo<std::shared_ptr<runner_cache>>([] { return std::make_shared<runner_cache>(); });
    std::lock_guard lock((*cache)->mu);
    auto& rs = (*cache)->runners;
    if (rs.size() <= slot) rs.resize(slot + 1);
    if (!rs[slot]) {
        if (!c.state().library) c.fail("this session has no function library to run '" + f.name + "' from");
        try {
            rs[slot] = std::make_shared<function_runner>(*c.state().library, f,
                                                         c.n().op + " '" + c.name() + "'", c.state());
        } catch (const not_found_error& e) {
            c.fail(e.message(), e.hint());
        }
    }
    return *rs[slot];
}

inline std::vector<value> inputs_from(kernel_context& c, int first) {
    std::vector<value> v;
    for (int i = first; i < c.num_inputs(); ++i) v.push_back(c.raw_input(i));
    return v;
}

/// TF's ToBool: a scalar is true when nonzero (a string when non-empty); any other tensor when it
/// has elements. Throws graph_error naming the node for a dtype with no truth value.
inline bool truth(kernel_context& c, const tensor& t0, const std::string& what) {
    if (!t0.valid()) c.fail(what + " is not a tensor");
    tensor t = to_host(t0);
    if (t.rank() != 0) return t.num_elements() > 0;
    bool r = false;
    switch (t.type()) {
        case dtype::bool_: r = t.data<bool>()[0]; break;
        case dtype::string: r = !t.data<std::string>()[0].empty(); break;
        case dtype::float32: case dtype::float64: case dtype::int32: case dtype::int64: case dtype::int8:
        case dtype::int16: case dtype::uint8: case dtype::uint16: case dtype::uint32: case dtype::uint64:
        case dtype::float16: case dtype::bfloat16:
            r = graft::cast(t, dtype::float64).data<double>()[0] != 0.0;
            break;
        default: c.fail(what + " is " + t.describe() + ", which cannot be converted to a boolean");
    }
    return r;
}

/// Results of a branch as this node's outputs; count and dtypes checked against Tout.
inline void set_results(kernel_context& c, const function_runner& f, std::vector<value> rs) {
    if (static_cast<int>(rs.size()) != c.num_outputs()) {
        c.fail(detail::cat("function '", f.name(), "' returns ", rs.size(), " values, the node has ", c.num_outputs(),
                           " outputs (Tout)"));
    }
    const auto& tout = c.attr("Tout").list_of<dtype>();
    for (std::size_t i = 0; i < rs.size(); ++i) {
        dtype t = function_runner::type_of(rs[i]);
        if (i < tout.size() && t != tout[i]) {
            c.fail(detail::cat("function '", f.name(), "' result ", i, " is ", dtype_name(t), " but Tout[", i, "] is ",
                               dtype_name(tout[i])));
        }
        c.set_output_value(static_cast<int>(i), std::move(rs[i]));
    }
}

inline void run_while(kernel_context& c) {
    auto& cond = runner(c, 0, c.attr("cond").func());
    auto& body = runner(c, 1, c.attr("body").func());
    std::vector<value> vars = inputs_from(c, 0);
    for (;;) {
        auto cr = cond.call(vars);
        if (cr.size() != 1) {
            c.fail(detail::cat("cond function '", cond.name(), "' must return one value (a bool scalar), it returns ",
                               cr.size()));
        }
        if (cr[0].is_resource) c.fail("cond function '" + cond.name() + "' returns a resource handle, not a bool scalar");
        if (!truth(c, cr[0].t, "the result of cond function '" + cond.name() + "'")) break;
        auto next = body.call(vars);
        if (next.size() != vars.size()) {
            c.fail(detail::cat("body function '", body.name(), "' returns ", next.size(), " values for ", vars.size(),
                               " loop variables"));
        }
        for (std::size_t i = 0; i < next.size(); ++i) {
            dtype was = function_runner::type_of(vars[i]), now = function_runner::type_of(next[i]);
            if (was != now) {
                c.fail(detail::cat("body function '", body.name(), "' returns ", dtype_name(now), " for loop variable ",
                                   i, " of dtype ", dtype_name(was)));
            }
        }
        vars = std::move(next);
    }
    for (std::size_t i = 0; i < vars.size(); ++i) c.set_output_value(static_cast<int>(i), std::move(vars[i]));
}

inline void run_if(kernel_context& c) {
    bool taken = truth(c, c.input(0), "the cond input");
    auto& f = runner(c, taken ? 0 : 1, c.attr(taken ? "then_branch" : "else_branch").func());
    set_results(c, f, f.call(inputs_from(c, 1)));
}

inline void run_case(kernel_context& c) {
    tensor bi = to_host(c.input(0));
    if (bi.type() != dtype::int32 || bi.rank() != 0) c.fail("branch_index must be an int32 scalar, given " + bi.describe());
    const auto& branches = c.attr("branches").list_of<func_attr>();
    if (branches.empty()) c.fail("Case has no branches");
    auto i = static_cast<std::int64_t>(bi.data<std::int32_t>()[0]);
    auto n = static_cast<std::int64_t>(branches.size());
    std::size_t pick = static_cast<std::size_t>(i < 0 || i >= n ? n - 1 : i);  // TF runs the last branch
    auto& f = runner(c, pick, branches[pick]);
    set_results(c, f, f.call(inputs_from(c, 1)));
}

// ------------------------------------------------------------------ TensorList

inline std::int64_t int_scalar(kernel_context& c, int i, const char* what) {
    tensor t = to_host(c.input(i));
    if (t.num_elements() != 1 || (t.type() != dtype::int32 && t.type() != dtype::int64)) {
        c.fail(detail::cat(what, " must be an int32 scalar, given ", t.describe()));
    }
    return t.type() == dtype::int32 ? t.data<std::int32_t>()[0] : t.data<std::int64_t>()[0];
}
inline std::vector<std::int64_t> int_vector(kernel_context& c, int i, const char* what) {
    tensor t = to_host(c.input(i));
    if (t.rank() != 1 || (t.type() != dtype::int32 && t.type() != dtype::int64)) {
        c.fail(detail::cat(what, " must be an int32 vector, given ", t.describe()));
    }
    std::vector<std::int64_t> v(static_cast<std::size_t>(t.num_elements()));
    for (std::size_t k = 0; k < v.size(); ++k) {
        v[k] = t.type() == dtype::int32 ? t.data<std::int32_t>()[k] : t.data<std::int64_t>()[k];
    }
    return v;
}
inline shape shape_input(kernel_context& c, int i) { return shape_from_tensor(to_host(c.input(i)), c.n().op.c_str()); }

/// The list at input i, its dtype checked against element_dtype when the op has that attr.
/// `handle` keeps the list alive.
inline const tensor_list& list_input(kernel_context& c, int i, tensor& handle, bool check = true) {
    handle = c.input(i);
    const tensor_list& l = list_at(handle, c.n().op.c_str());
    if (check) l.check_dtype(c.attr_type("element_dtype"));
    return l;
}

/// Rows of `t` (dim 0) as list elements.
inline std::vector<tensor> rows_of(const tensor& t) {
    auto d = t.shape().dims();
    d.erase(d.begin());
    std::vector<tensor> v;
    for (std::int64_t r = 0; r < t.dim(0); ++r) v.push_back(t.slice(r, 1).reshaped(shape(d)).clone());
    return v;
}
inline shape row_shape(const tensor& t) {
    auto d = t.shape().dims();
    d.erase(d.begin());
    return shape(d);
}
inline void require_rows(kernel_context& c, const tensor& t) {
    if (t.rank() < 1) c.fail("Tensor must be at least a vector, but saw shape: " + t.shape().str());
}

inline void register_lists(kernel_registry& r) {
    kernel_def host01;
    host01.host_inputs = {0, 1};
    r.add("EmptyTensorList", [](kernel_context& c) {
        auto max = int_scalar(c, 1, "max_num_elements");
        c.set_output(0, list_handle(std::make_shared<tensor_list>(c.attr_type("element_dtype"), shape_input(c, 0), max)));
    }, host01);
    r.add("TensorListReserve", [](kernel_context& c) {
        auto n = int_scalar(c, 1, "num_elements");
        if (n < 0) c.fail(detail::cat("The num_elements to reserve must be a non negative number, but got ", n));
        auto l = std::make_shared<tensor_list>(c.attr_type("element_dtype"), shape_input(c, 0));
        l->items.resize(static_cast<std::size_t>(n));
        c.set_output(0, list_handle(std::move(l)));
    }, host01);
    r.add("TensorListLength", [](kernel_context& c) {
        tensor h;
        c.set_output(0, tensor::scalar_of(static_cast<std::int32_t>(list_input(c, 0, h, false).size())));
    });
    r.add("TensorListElementShape", [](kernel_context& c) {
        tensor h;
        c.set_output(0, shape_to_tensor(list_input(c, 0, h, false).element_shape, c.attr_type("shape_type")));
    });
    r.add("TensorListPushBack", [](kernel_context& c) {
        tensor h, t = c.input(1);
        const auto& in = list_input(c, 0, h);
        in.check_item(t, "append");
        if (in.max_num_elements != -1 && in.size() >= in.max_num_elements) {
            c.fail(detail::cat("Tried to push item into a full list list size: ", in.size(),
                               " max_num_elements: ", in.max_num_elements));
        }
        auto l = in.copy();
        l->items.push_back(t);
        c.set_output(0, list_handle(std::move(l)));
    });
    r.add("TensorListPopBack", [](kernel_context& c) {
        tensor h;
        const auto& in = list_input(c, 0, h);
        if (in.size() == 0) c.fail("Trying to pop from an empty list.");
        tensor t = in.get(in.size() - 1, shape_input(c, 1));
        auto l = in.copy();
        l->items.pop_back();
        c.set_output(0, list_handle(std::move(l)));
        c.set_output(1, t);
    });
    r.add("TensorListGetItem", [](kernel_context& c) {
        tensor h;
        const auto& in = list_input(c, 0, h);
        c.set_output(0, in.get(int_scalar(c, 1, "index"), shape_input(c, 2)));
    });
    r.add("TensorListSetItem", [](kernel_context& c) {
        tensor h, t = c.input(2);
        const auto& in = list_input(c, 0, h);
        auto i = int_scalar(c, 1, "index");
        bool resize = c.attr_or("resize_if_index_out_of_bounds", false);
        if (i < 0 || (i >= in.size() && !resize)) {
            c.fail(detail::cat("Trying to modify element ", i, " in a list with ", in.size(), " elements."));
        }
        if (t.type() != in.element_dtype || !in.element_shape.compatible_with(t.shape())) {
            c.fail(detail::cat("Tried to set a ", t.describe(), " tensor at a list index, but the list holds ",
                               dtype_name(in.element_dtype), " elements of shape ", in.element_shape.str()));
        }
        auto l = in.copy();
        if (i >= l->size()) l->items.resize(static_cast<std::size_t>(i + 1));
        l->items[static_cast<std::size_t>(i)] = t;
        c.set_output(0, list_handle(std::move(l)));
    });
    r.add("TensorListStack", [](kernel_context& c) {
        tensor h;
        const auto& in = list_input(c, 0, h);
        auto want = c.attr_or<std::int64_t>("num_elements", -1);
        if (want != -1 && want != in.size()) {
            c.fail(detail::cat("Operation expected a list with ", want, " elements but got a list with ", in.size(),
                               " elements."));
        }
        std::vector<std::int64_t> all(static_cast<std::size_t>(in.size()));
        for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::int64_t>(i);
        c.set_output(0, in.gather(all, shape_input(c, 1)));
    });
    r.add("TensorListGather", [](kernel_context& c) {
        tensor h;
        const auto& in = list_input(c, 0, h);
        c.set_output(0, in.gather(int_vector(c, 1, "indices"), shape_input(c, 2)));
    });
    r.add("TensorListFromTensor", [](kernel_context& c) {
        tensor t = c.input(0);
        require_rows(c, t);
        shape es = shape_input(c, 1);
        if (!es.compatible_with(row_shape(t))) {
            c.fail("Specified a list with shape " + es.str() + " from a tensor with shape " + t.shape().str());
        }
        auto l = std::make_shared<tensor_list>(c.attr_type("element_dtype"), es);
        if (t.type() != l->element_dtype) {
            c.fail(detail::cat("element_dtype is ", dtype_name(l->element_dtype), " but the tensor is ", t.describe()));
        }
        l->items = rows_of(to_host(t));
        c.set_output(0, list_handle(std::move(l)));
    });
    auto scatter = [](kernel_context& c, const tensor_list& base, const tensor& t, const std::vector<std::int64_t>& idx,
                      std::int64_t min_size) {
        require_rows(c, t);
        if (static_cast<std::int64_t>(idx.size()) != t.dim(0)) {
            c.fail(detail::cat("Invalid number of rows in input tensor. Expected: ", idx.size(), " Actual: ", t.dim(0)));
        }
        if (t.type() != base.element_dtype || !base.element_shape.compatible_with(row_shape(t))) {
            c.fail(detail::cat("Tried to scatter a ", t.describe(), " tensor into a list of ", dtype_name(base.element_dtype),
                               " elements of shape ", base.element_shape.str()));
        }
        auto l = base.copy();
        std::int64_t size = std::max(min_size, l->size());
        for (auto i : idx) {
            if (i < 0) c.fail(detail::cat("Indices in TensorListScatter must all be non-negative, given ", i));
            size = std::max(size, i + 1);
        }
        l->items.resize(static_cast<std::size_t>(size));
        auto rows = rows_of(to_host(t));
        for (std::size_t k = 0; k < idx.size(); ++k) l->items[static_cast<std::size_t>(idx[k])] = rows[k];
        c.set_output(0, list_handle(std::move(l)));
    };
    r.add("TensorListScatterV2", [scatter](kernel_context& c) {
        tensor_list base(c.attr_type("element_dtype"), shape_input(c, 2));
        scatter(c, base, c.input(0), int_vector(c, 1, "indices"), int_scalar(c, 3, "num_elements"));
    });
    r.add("TensorListScatterIntoExistingList", [scatter](kernel_context& c) {
        tensor h;
        const auto& in = list_input(c, 0, h);
        scatter(c, in, c.input(1), int_vector(c, 2, "indices"), 0);
    });
    r.add("TensorListSplit", [](kernel_context& c) {
        tensor t = to_host(c.input(0));
        require_rows(c, t);
        shape es = shape_input(c, 1);
        auto lengths = int_vector(c, 2, "lengths");
        std::int64_t total = 0;
        for (auto n : lengths) {
            if (n < 0) c.fail(detail::cat("Invalid value in lengths: ", n));
            total += n;
        }
        if (total != t.dim(0)) {
            c.fail(detail::cat("Unused values in tensor. Length of tensor: ", t.dim(0), " Values used: ", total));
        }
        auto l = std::make_shared<tensor_list>(t.type(), es);
        if (t.type() != c.attr_type("element_dtype")) c.fail("element_dtype does not match the tensor: " + t.describe());
        std::int64_t at = 0;
        for (auto n : lengths) {
            tensor part = t.slice(at, n).clone();
            if (!es.compatible_with(part.shape())) {
                c.fail("Tried to split a tensor into elements of shape " + part.shape().str() + " for a list of element shape " +
                       es.str());
            }
            l->items.push_back(part);
            at += n;
        }
        c.set_output(0, list_handle(std::move(l)));
    });
    r.add("TensorListResize", [](kernel_context& c) {
        tensor h;
        const auto& in = list_input(c, 0, h, false);
        auto n = int_scalar(c, 1, "size");
        if (n < 0) c.fail(detail::cat("TensorListSlice expects size to be non-negative. Got: ", n));
        auto l = in.copy();
        l->items.resize(static_cast<std::size_t>(n));
        c.set_output(0, list_handle(std::move(l)));
    });
    r.add("TensorListConcatV2", [](kernel_context& c) {
        tensor h;
        const auto& in = list_input(c, 0, h);
        shape es = merge_shapes(in.element_shape, shape_input(c, 1));
        if (es.rank_known() && es.rank() < 1) c.fail("Concat requires elements to be at least vectors");
        tensor lead = c.num_inputs() > 2 ? to_host(c.input(2)) : tensor();
        std::vector<tensor> parts;
        for (std::int64_t i = 0; i < in.size(); ++i) {
            shape want = es;
            // an unset element is zeros with leading_dims[i] rows
            if (!in.items[static_cast<std::size_t>(i)].valid() && es.rank_known() && es.rank() >= 1 &&
                lead.valid() && lead.type() == dtype::int64 && i < lead.num_elements()) {
                auto d = es.dims();
                d[0] = lead.data<std::int64_t>()[i];
                want = shape(d);
            }
            tensor t = in.get(i, want);
            if (t.rank() < 1) c.fail("Concat saw a scalar element: elements must be at least vectors");
            parts.push_back(to_host(t));
        }
        tensor lengths(dtype::int64, shape{static_cast<std::int64_t>(parts.size())});
        std::int64_t rows = 0;
        for (std::size_t i = 0; i < parts.size(); ++i) {
            lengths.data<std::int64_t>()[i] = parts[i].dim(0);
            rows += parts[i].dim(0);
        }
        if (parts.empty()) {
            if (!es.rank_known()) c.fail("Concat of an empty list needs a known element shape, given " + es.str());
            auto d = es.dims();
            d[0] = 0;
            for (std::size_t k = 1; k < d.size(); ++k) {
                if (d[k] < 0) c.fail("Concat of an empty list needs a fully defined element shape except dim 0, given " + es.str());
            }
            c.set_output(0, tensor(in.element_dtype, shape(d)));
            c.set_output(1, lengths);
            return;
        }
        auto d = parts[0].shape().dims();
        d[0] = rows;
        tensor out = tensor::uninitialized(in.element_dtype, shape(d));
        std::int64_t at = 0;
        for (auto& p : parts) {
            if (row_shape(p) != row_shape(parts[0])) {
                c.fail("Incompatible shapes during concat: " + parts[0].shape().str() + " vs. " + p.shape().str());
            }
            if (p.dim(0) > 0) out.slice(at, p.dim(0)).copy_from(p);
            at += p.dim(0);
        }
        c.set_output(0, out);
        c.set_output(1, lengths);
    });
}

}  // namespace fn_detail

inline void register_functional(kernel_registry& r) {
    for (const char* op : {"While", "StatelessWhile"}) r.add(op, fn_detail::run_while);
    for (const char* op : {"If", "StatelessIf"}) r.add(op, fn_detail::run_if);
    for (const char* op : {"Case", "StatelessCase"}) r.add(op, fn_detail::run_case);
    r.add("_GraftCallArg", [](kernel_context& c) {
        auto& f = frame_of(c);
        auto i = c.attr_int("index");
        if (i < 0 || i >= static_cast<std::int64_t>(f.args.size())) {
            c.fail(detail::cat("_GraftCallArg index ", i, " out of range (", f.args.size(), " arguments)"));
        }
        c.set_output_value(0, f.args[static_cast<std::size_t>(i)]);
    });
    r.add("_GraftCallRet", [](kernel_context& c) {
        auto& f = frame_of(c);
        auto i = c.attr_int("index");
        if (i < 0 || i >= static_cast<std::int64_t>(f.rets.size())) {
            c.fail(detail::cat("_GraftCallRet index ", i, " out of range (", f.rets.size(), " results)"));
        }
        f.rets[static_cast<std::size_t>(i)] = c.raw_input(0);
    });
    fn_detail::register_lists(r);
}

}  // namespace graft::exec::kernels
