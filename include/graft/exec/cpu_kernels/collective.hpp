// graft/exec/cpu_kernels/collective.hpp — the collective family's CPU kernels: ops that run on graft::dist's
// process-wide communicator (graft::dist::world(): local with one rank, MPI under mpirun once
// graft::dist::init_mpi ran). GraftAllreduceStart / GraftAllreduceWait are data-parallel training's
// gradient allreduce (graft/dist/data_parallel.hpp) through the fusion engine (graft/dist/fusion.hpp).
// register_tf_collective: the collectives of graphs TF and Horovod wrote (CollectiveReduceV2,
// CollectiveGatherV2, CollectiveBcastSendV2/RecvV2, their V1 forms, HorovodAllreduce/Allgather/
// Broadcast) on the same communicator.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "graft/dist/communicator.hpp"
#include "graft/dist/fusion.hpp"
#include "graft/exec/kernel.hpp"

namespace graft::exec::kernels {

namespace detail_collective {
inline dist::reduce_op reduction_of(kernel_context& c, const std::string& r) {
    if (r == "mean") return dist::reduce_op::mean;
    if (r == "sum") return dist::reduce_op::sum;
    c.fail("reduction '" + r + "' is not one of mean, sum");
}
}  // namespace detail_collective

// ------------------------------------------------------------------ TF's and Horovod's collectives
//
// graft runs one collective group: every rank of graft::dist::world(). TF's group_size must be the
// world's size; group_key and instance_key (TF's matching keys) and Horovod's tensor names are not
// used to match ranks (every rank runs the graph's collectives in the same plan order), but they are
// checked: before exchanging data the ranks agree, in one small allreduce, on which collective they
// run, its key and dtype, so ranks that run different collectives fail naming the node instead of
// exchanging unrelated bytes. The broadcast receivers learn the root there: the one rank that runs
// the Send op. Ordering-token inputs (CollectiveReduceV2's `ordering_token`) are accepted and ignored.
namespace detail_tf_collective {

using graft::detail::cat;

enum collective_kind : std::int64_t { reduce = 1, gather = 2, bcast = 3, hvd_allreduce = 4, hvd_allgather = 5, hvd_broadcast = 6 };

/// The world, when `group_size` is its size; else a graph_error naming the node and both sizes.
inline std::shared_ptr<dist::communicator> group_of(const kernel_context& c, std::int64_t group_size) {
    auto w = dist::world();
    if (group_size != w->size()) {
        c.fail(cat("group_size ", group_size, " does not match the ", w->size(), "-rank world (", w->backend(),
                   " communicator): graft runs one collective group, every rank of the job"),
               w->size() == 1 ? cat("start the job with mpirun -np ", group_size,
                                    " (`graft run` of a graft built with MPI joins it; a program calls "
                                    "graft::dist::init_mpi() before running the graph)")
                              : std::string("run the graph on as many ranks as its group_size"));
    }
    return w;
}

/// Input i as an integer scalar (TF's V2 group_size/group_key/instance_key). Throws graph_error.
inline std::int64_t scalar_input(const kernel_context& c, int i, const char* what) {
    tensor t = c.input(i);
    if (t.num_elements() != 1 || (t.type() != dtype::int32 && t.type() != dtype::int64)) {
        c.fail(cat(what, " (input ", i, ") must be an int32 scalar, got ", t.describe()));
    }
    return t.type() == dtype::int32 ? t.data<std::int32_t>()[0] : t.data<std::int64_t>()[0];
}

inline void check_reducible(const kernel_context& c, const tensor& t) {
    if (!dist::reducible(t.type())) {
        c.fail(cat(c.n().op, " of ", dtype_name(t.type()), " is not supported"),
               "graft's communicator reduces float32, float64, int32 and int64 tensors");
    }
}
inline void check_movable(const kernel_context& c, dtype t) {
    if (dtype_size(t) == 0) {
        c.fail(cat(c.n().op, " of ", dtype_name(t), " is not supported"),
               "graft's communicator moves fixed-size dtypes (numbers and bool), not strings, resources or variants");
    }
}

/// The ranks agree on what they run: `same` holds values every rank must share (collective kind,
/// keys, dtype, ...; `labels` names them), `sends` says whether this rank is a broadcast's root.
/// One max-allreduce of [v, -v for each value; a send flag per rank]. Returns the sending ranks.
/// Throws graph_error naming the node and the first value the ranks disagree on.
inline std::vector<int> agree(const kernel_context& c, dist::communicator& w, std::initializer_list<std::int64_t> same,
                              std::initializer_list<const char*> labels, bool sends = false) {
    const std::size_t k = same.size();
    std::vector<std::int64_t> v(2 * k + static_cast<std::size_t>(w.size()), 0);
    std::size_t i = 0;
    for (auto x : same) {
        v[2 * i] = x;
        v[2 * i + 1] = -x;
        ++i;
    }
    v[2 * k + static_cast<std::size_t>(w.rank())] = sends ? 1 : 0;
    w.allreduce_raw(v.data(), v.size(), dtype::int64, dist::reduce_op::max, c.name());
    i = 0;
    auto label = labels.begin();
    for (auto x : same) {
        if (v[2 * i] != -v[2 * i + 1]) {
            c.fail(cat("the ranks do not run the same collective here: rank ", w.rank(), " has ", *label, " ", x,
                       ", the ranks' values range from ", -v[2 * i + 1], " to ", v[2 * i]),
                   "every rank must run the same collective ops in the same order (the same graph, the same fetches)");
        }
        ++i;
        ++label;
    }
    std::vector<int> senders;
    for (int r = 0; r < w.size(); ++r) {
        if (v[2 * k + static_cast<std::size_t>(r)]) senders.push_back(r);
    }
    return senders;
}

template <class F>
void for_each_number(tensor& t, F&& f) {
    const auto n = static_cast<std::size_t>(t.num_elements());
    switch (base_type(t.type())) {
        case dtype::float32: { auto* p = t.data<float>(); for (std::size_t i = 0; i < n; ++i) f(p[i]); break; }
        case dtype::float64: { auto* p = t.data<double>(); for (std::size_t i = 0; i < n; ++i) f(p[i]); break; }
        case dtype::int32: { auto* p = t.data<std::int32_t>(); for (std::size_t i = 0; i < n; ++i) f(p[i]); break; }
        case dtype::int64: { auto* p = t.data<std::int64_t>(); for (std::size_t i = 0; i < n; ++i) f(p[i]); break; }
        default: break;
    }
}

/// TF's final_op "Div": every element divided by the group size (integers truncate, as TF's Div).
inline void divide(tensor& t, int n) {
    for_each_number(t, [n](auto& x) { x = static_cast<std::remove_reference_t<decltype(x)>>(x / n); });
}

/// Horovod's scaling: each element times `f` in double, converted back (ints truncate).
inline void scale(tensor& t, double f) {
    for_each_number(t, [f](auto& x) { x = static_cast<std::remove_reference_t<decltype(x)>>(static_cast<double>(x) * f); });
}

inline dist::reduce_op merge_op(const kernel_context& c) {
    const auto& m = c.attr_string("merge_op");
    if (m == "Add") return dist::reduce_op::sum;
    if (m == "Mul") return dist::reduce_op::product;
    if (m == "Min") return dist::reduce_op::min;
    if (m == "Max") return dist::reduce_op::max;
    c.fail("merge_op '" + m + "' is not one of Add, Mul, Min, Max");
}

/// CollectiveReduce(V2): merge_op across the group, then final_op (Id, or Div by the group size).
inline void tf_reduce(kernel_context& c, std::int64_t group_size, std::int64_t group_key, std::int64_t instance_key) {
    auto w = group_of(c, group_size);
    tensor t = c.input(0);
    check_reducible(c, t);
    const auto op = merge_op(c);
    const auto& final_op = c.attr_string("final_op");
    if (final_op != "Id" && final_op != "Div") c.fail("final_op '" + final_op + "' is not one of Id, Div");
    agree(c, *w, {collective_kind::reduce, group_key, instance_key, static_cast<std::int64_t>(t.type()), t.num_elements()},
          {"collective", "group_key", "instance_key", "dtype", "element count"});
    w->allreduce(t, op, c.name());
    if (final_op == "Div") divide(t, w->size());
    c.set_output(0, std::move(t));
}

/// CollectiveGather(V2): the ranks' inputs concatenated along dimension 0 in rank order. TF wants
/// the same shape on every rank; graft's allgather also takes different row counts.
inline void tf_gather(kernel_context& c, std::int64_t group_size, std::int64_t group_key, std::int64_t instance_key) {
    auto w = group_of(c, group_size);
    tensor t = c.input(0);
    check_movable(c, t.type());
    if (t.rank() == 0) c.fail("a scalar input cannot be gathered (TF's gather needs rank 1 or more)");
    agree(c, *w, {collective_kind::gather, group_key, instance_key, static_cast<std::int64_t>(t.type())},
          {"collective", "group_key", "instance_key", "dtype"});
    c.set_output(0, w->allgather(t, c.name()));
}

/// The root of a broadcast: the one rank that sends. Throws graph_error when none or several send.
inline int bcast_root(const kernel_context& c, dist::communicator& w, bool sends, std::int64_t group_key,
                      std::int64_t instance_key, dtype t) {
    auto senders = agree(c, w, {collective_kind::bcast, group_key, instance_key, static_cast<std::int64_t>(t)},
                         {"collective", "group_key", "instance_key", "dtype"}, sends);
    if (senders.empty()) {
        c.fail(cat("no rank sends this broadcast (instance_key ", instance_key, "): every rank runs a receive"),
               "exactly one rank must run CollectiveBcastSend(V2) where the others run CollectiveBcastRecv(V2)");
    }
    if (senders.size() > 1) {
        c.fail(cat("ranks ", senders[0], " and ", senders[1], " both send this broadcast (instance_key ", instance_key, ")"),
               "exactly one rank must run CollectiveBcastSend(V2) where the others run CollectiveBcastRecv(V2)");
    }
    return senders[0];
}

inline void tf_bcast_send(kernel_context& c, std::int64_t group_size, std::int64_t group_key, std::int64_t instance_key,
                          const graft::shape* declared) {
    auto w = group_of(c, group_size);
    tensor t = c.input(0);
    check_movable(c, t.type());
    if (declared && declared->fully_defined() && declared->dims() != t.shape().dims()) {
        c.fail(cat("the input is ", t.describe(), " but the shape attr says ", declared->str()));
    }
    const int root = bcast_root(c, *w, true, group_key, instance_key, t.type());
    w->broadcast(t, root, c.name());
    c.set_output(0, std::move(t));
}

inline void tf_bcast_recv(kernel_context& c, std::int64_t group_size, std::int64_t group_key, std::int64_t instance_key,
                          const graft::shape& s) {
    auto w = group_of(c, group_size);
    const dtype type = c.attr_type("T");
    check_movable(c, type);
    if (!s.fully_defined()) c.fail("the received tensor's shape " + s.str() + " is not fully defined");
    tensor t(type, s);
    const int root = bcast_root(c, *w, false, group_key, instance_key, type);
    w->broadcast(t, root, c.name());
    c.set_output(0, std::move(t));
}

/// The communicator for a Horovod op: process set 0 (all ranks) only.
inline std::shared_ptr<dist::communicator> horovod_world(const kernel_context& c) {
    if (auto id = c.attr_int("process_set_id"); id != 0) {
        c.fail(cat("process_set_id ", id, ": graft runs Horovod's global process set (0) only"),
               "graft runs one collective group, every rank of the job");
    }
    return dist::world();
}

/// Horovod matches ranks' ops by name (the node name, its last component with ignore_name_scope):
/// a 52-bit FNV-1a hash of it is the key the ranks agree on.
inline std::int64_t horovod_key(const kernel_context& c) {
    std::string_view name = c.name();
    if (c.attr_bool("ignore_name_scope")) {
        if (auto slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
    }
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char ch : name) h = (h ^ ch) * 1099511628211ull;
    return static_cast<std::int64_t>(h & ((std::uint64_t{1} << 52) - 1));
}

}  // namespace detail_tf_collective

/// Binds TF's collective ops and Horovod's to graft::dist::world() (called by register_collective).
inline void register_tf_collective(kernel_registry& r) {
    namespace d = detail_tf_collective;
    // V1: the group and keys are attrs.
    r.add("CollectiveReduce", [](kernel_context& c) {
        d::tf_reduce(c, c.attr_int("group_size"), c.attr_int("group_key"), c.attr_int("instance_key"));
    });
    r.add("CollectiveGather", [](kernel_context& c) {
        d::tf_gather(c, c.attr_int("group_size"), c.attr_int("group_key"), c.attr_int("instance_key"));
    });
    r.add("CollectiveBcastSend", [](kernel_context& c) {
        d::tf_bcast_send(c, c.attr_int("group_size"), c.attr_int("group_key"), c.attr_int("instance_key"),
                         &c.attr("shape").shape());
    });
    r.add("CollectiveBcastRecv", [](kernel_context& c) {
        d::tf_bcast_recv(c, c.attr_int("group_size"), c.attr_int("group_key"), c.attr_int("instance_key"),
                         c.attr("shape").shape());
    });
    // V2: group_size, group_key, instance_key are inputs 1..3 (0..2 for BcastRecvV2, whose input 3 is the shape).
    r.add("CollectiveReduceV2", [](kernel_context& c) {
        d::tf_reduce(c, d::scalar_input(c, 1, "group_size"), d::scalar_input(c, 2, "group_key"),
                     d::scalar_input(c, 3, "instance_key"));
    });
    r.add("CollectiveGatherV2", [](kernel_context& c) {
        d::tf_gather(c, d::scalar_input(c, 1, "group_size"), d::scalar_input(c, 2, "group_key"),
                     d::scalar_input(c, 3, "instance_key"));
    });
    r.add("CollectiveBcastSendV2", [](kernel_context& c) {
        d::tf_bcast_send(c, d::scalar_input(c, 1, "group_size"), d::scalar_input(c, 2, "group_key"),
                         d::scalar_input(c, 3, "instance_key"), nullptr);
    });
    r.add("CollectiveBcastRecvV2", [](kernel_context& c) {
        tensor s = c.input(3);
        if (s.rank() != 1 || (s.type() != dtype::int32 && s.type() != dtype::int64)) {
            c.fail("shape (input 3) must be an int32 or int64 vector, got " + s.describe());
        }
        std::vector<std::int64_t> dims(static_cast<std::size_t>(s.num_elements()));
        for (std::size_t i = 0; i < dims.size(); ++i) {
            dims[i] = s.type() == dtype::int32 ? s.data<std::int32_t>()[i] : s.data<std::int64_t>()[i];
            if (dims[i] < 0) c.fail("shape (input 3) has a negative dimension: " + s.describe());
        }
        d::tf_bcast_recv(c, d::scalar_input(c, 0, "group_size"), d::scalar_input(c, 1, "group_key"),
                         d::scalar_input(c, 2, "instance_key"), graft::shape(dims));
    });

    r.add("HorovodAllreduce", [](kernel_context& c) {
        auto w = d::horovod_world(c);
        tensor t = c.input(0);
        d::check_reducible(c, t);
        const auto code = c.attr_int("reduce_op");
        dist::reduce_op op = dist::reduce_op::sum;
        switch (code) {
            case 0: case 1: break;  // Average (Sum, then postscale / size), Sum
            case 3: op = dist::reduce_op::min; break;
            case 4: op = dist::reduce_op::max; break;
            case 5: op = dist::reduce_op::product; break;
            case 2:
                c.fail("reduce_op 2 (Adasum) is not supported",
                       "graft's communicator reduces by Average, Sum, Min, Max or Product (reduce_op 0, 1, 3, 4, 5)");
            default: c.fail(graft::detail::cat("reduce_op ", code, " is not one of Horovod's (0 Average, 1 Sum, 3 Min, 4 Max, 5 Product)"));
        }
        const double pre = c.attr_float("prescale_factor");
        double post = c.attr_float("postscale_factor");
        if (code == 0) post /= w->size();
        d::agree(c, *w, {d::collective_kind::hvd_allreduce, d::horovod_key(c), static_cast<std::int64_t>(t.type()), t.num_elements()},
                 {"collective", "name hash", "dtype", "element count"});
        if (pre != 1.0) {
            t = t.clone();
            d::scale(t, pre);
        }
        w->allreduce(t, op, c.name());
        if (post != 1.0) d::scale(t, post);
        c.set_output(0, std::move(t));
    });
    r.add("HorovodAllgather", [](kernel_context& c) {
        auto w = d::horovod_world(c);
        tensor t = c.input(0);
        d::check_movable(c, t.type());
        d::agree(c, *w, {d::collective_kind::hvd_allgather, d::horovod_key(c), static_cast<std::int64_t>(t.type())},
                 {"collective", "name hash", "dtype"});
        c.set_output(0, w->allgather(t, c.name()));
    });
    r.add("HorovodBroadcast", [](kernel_context& c) {
        auto w = d::horovod_world(c);
        tensor t = c.input(0);
        d::check_movable(c, t.type());
        const auto root = c.attr_int("root_rank");
        if (root < 0 || root >= w->size()) {
            c.fail(graft::detail::cat("root_rank ", root, " is not a rank of this ", w->size(), "-rank job"));
        }
        d::agree(c, *w, {d::collective_kind::hvd_broadcast, d::horovod_key(c), static_cast<std::int64_t>(t.type()), root},
                 {"collective", "name hash", "dtype", "root_rank"});
        w->broadcast(t, static_cast<int>(root), c.name());
        c.set_output(0, std::move(t));
    });
}

inline void register_collective(kernel_registry& r) {
    r.add("GraftAllreduceStart", [](kernel_context& c) {
        tensor g = c.input(0);
        const auto bucket = c.attr_int("bucket"), members = c.attr_int("members"), slot = c.attr_int("slot");
        dist::fusion_engine::instance().put(c.attr_string("group"), static_cast<int>(bucket), static_cast<int>(members),
                                            static_cast<int>(slot), detail_collective::reduction_of(c, c.attr_string("reduction")),
                                            std::move(g));
        c.set_output(0, tensor::scalar_of<std::int64_t>(bucket * 65536 + slot));
    });
    r.add("GraftAllreduceWait", [](kernel_context& c) {
        c.set_output(0, dist::fusion_engine::instance().take(c.attr_string("group"), static_cast<int>(c.attr_int("bucket")),
                                                             static_cast<int>(c.attr_int("slot"))));
    });
    register_tf_collective(r);
}

}  // namespace graft::exec::kernels
