// graft/exec/queues.hpp — TF1 input-pipeline queues (FIFOQueueV2, RandomShuffleQueueV2,
// PaddingFIFOQueueV2, PriorityQueueV2): tuples of tensors that one run enqueues and later runs
// dequeue, as TF's queue_base / fifo_queue / random_shuffle_queue / padding_fifo_queue /
// priority_queue semantics say: component dtypes and shapes, capacity, min_after_dequeue, close, a
// random pick per dequeued element (graft's Philox, seeded by seed/seed2), zero padding of the
// dims a PaddingFIFOQueue leaves unknown (-1) up to the largest element of each DequeueMany, and
// ascending int64 priorities (component 0 of a PriorityQueue's tuples; equal priorities leave in
// the order they came).
//
// A queue lives in the session (session_state::node_state, keyed like TF's resource manager:
// container/shared_name, else the node name), so it survives between runs; its op outputs a
// resource handle (handle_of) that the enqueue/dequeue ops resolve with resource_of.
//
// graft runs a step on one thread: where TF would block (a dequeue of more elements than the
// queue holds, an enqueue into a full queue) graft throws queue_blocked_error saying how many
// elements the queue holds and needs, instead of waiting for a queue runner that never comes.
//
//   graft::exec::tensor_queue q({.name = "q", .types = {graft::dtype::float32}, .shapes = {graft::shape{}}});
//   q.enqueue({graft::tensor::scalar_of(1.0f)}, {});
//   auto tuple = q.dequeue_many(1, false, {});           // {float32[1]}
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/exec/resources.hpp"
#include "graft/ops/random.hpp"

namespace graft::exec {

/// A dequeue from a closed queue that holds too few elements, or an enqueue into a closed queue
/// (TF's OutOfRange / Cancelled: what ends a TF1 input loop).
class queue_closed_error : public error { using error::error; };
/// An enqueue or dequeue that TF would block on (full queue, too few elements) and graft, running
/// single-threaded, cannot wait for.
class queue_blocked_error : public error { using error::error; };

/// A queue of tuples of tensors (FIFO, random shuffle, padding FIFO or priority: options::kind).
/// Thread-safe. Every method throws with the location given (the op's node): invalid_argument_error
/// for a tuple of the wrong dtypes/shapes, queue_closed_error and queue_blocked_error as above.
class tensor_queue : public run_resource {
public:
    static constexpr const char* kind_name = "Queue";
    using tuple = std::vector<tensor>;
    /// Which of TF's queues: the order elements leave in, and what shapes may hold.
    enum class order : std::uint8_t {
        fifo,      ///< FIFOQueue: in order; shapes fully defined
        shuffle,   ///< RandomShuffleQueue: a random element per dequeue; shapes fully defined
        padding,   ///< PaddingFIFOQueue: in order; dims of -1 vary, DequeueMany pads them with zeros
        priority,  ///< PriorityQueue: smallest int64 priority (component 0, a scalar) first
    };
    struct options {
        std::string name;                ///< the queue's name in messages (shared_name or node name)
        std::vector<dtype> types;        ///< component dtypes (>= 1; a PriorityQueue's start with int64)
        std::vector<graft::shape> shapes;  ///< per component (see order); empty: unconstrained
        std::int64_t capacity = -1;      ///< < 0: unbounded
        order kind = order::fifo;        ///< which queue (the order elements leave in)
        std::int64_t min_after_dequeue = 0;  ///< shuffle: elements left after a dequeue (unless closed)
        std::int64_t seed = 0, seed2 = 0;    ///< shuffle: both 0 draw a nondeterministic seed
    };

    /// Throws invalid_argument_error for no component types, a shapes list of another length, or a
    /// shape that is not fully defined (TF's FIFO and shuffle queues keep TensorShapes).
    tensor_queue(options o, const location& where) : o_(std::move(o)) {
        if (o_.types.empty()) throw invalid_argument_error("a queue needs at least one component type", where);
        if (o_.kind == order::priority &&
            (o_.types[0] != dtype::int64 || (!o_.shapes.empty() && o_.shapes[0] != graft::shape{}))) {
            throw invalid_argument_error("a PriorityQueue's component 0 is its int64 scalar priority", where);
        }
        if (!o_.shapes.empty() && o_.shapes.size() != o_.types.size()) {
            throw invalid_argument_error(detail::cat("shapes has ", o_.shapes.size(), " entries but component_types has ",
                                                     o_.types.size(), "; give one shape per component or none"),
                                         where);
        }
        for (std::size_t i = 0; i < o_.shapes.size(); ++i) {
            if (o_.kind == order::padding ? !o_.shapes[i].rank_known() : !o_.shapes[i].fully_defined()) {
                throw invalid_argument_error(detail::cat("queue component ", i, " has shape ", o_.shapes[i].str(),
                                                         "; a ", kind_text(), " needs ",
                                                         o_.kind == order::padding ? "shapes of known rank (-1 for a dim that varies)"
                                                                                   : "fully defined shapes"),
                                             where);
            }
        }
        if (o_.kind == order::shuffle) {
            if (o_.seed == 0 && o_.seed2 == 0) {
                std::random_device rd;
                auto r64 = [&rd] { return (std::uint64_t{rd()} << 32) ^ rd(); };
                gen_.gen = ops::philox4x32(r64(), r64());
            } else {
                gen_.gen = ops::philox4x32(static_cast<std::uint64_t>(o_.seed), static_cast<std::uint64_t>(o_.seed2));
            }
        }
    }
    [[nodiscard]] const char* kind() const override { return kind_name; }
    [[nodiscard]] const options& opts() const { return o_; }
    /// "FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue" or "PriorityQueue" (TF's words in its
    /// messages).
    [[nodiscard]] const char* kind_text() const {
        switch (o_.kind) {
            case order::shuffle: return "RandomShuffleQueue";
            case order::padding: return "PaddingFIFOQueue";
            case order::priority: return "PriorityQueue";
            default: return "FIFOQueue";
        }
    }

    /// Elements held now.
    [[nodiscard]] std::int64_t size() const {
        std::lock_guard l(mu_);
        return static_cast<std::int64_t>(items_.size());
    }
    [[nodiscard]] bool closed() const {
        std::lock_guard l(mu_);
        return closed_;
    }
    /// Closes the queue: later enqueues fail, dequeues take what is left (then fail).
    void close() {
        std::lock_guard l(mu_);
        closed_ = true;
    }

    /// Enqueues one element (QueueEnqueueV2).
    void enqueue(const tuple& t, const location& where) {
        check_tuple(t, false, where);
        std::lock_guard l(mu_);
        check_room(1, where);
        tuple copy;
        for (const auto& c : t) copy.push_back(c.clone());
        push(std::move(copy));
    }
    /// Enqueues the rows (dim 0) of each component as elements (QueueEnqueueManyV2).
    void enqueue_many(const tuple& t, const location& where) {
        const std::int64_t n = check_tuple(t, true, where);
        std::lock_guard l(mu_);
        check_room(n, where);
        for (std::int64_t r = 0; r < n; ++r) {
            tuple row;
            for (const auto& c : t) row.push_back(c.slice(r, 1).reshaped(row_shape(c)).clone());
            push(std::move(row));
        }
    }

    /// Dequeues one element (QueueDequeueV2).
    tuple dequeue(const location& where) {
        std::lock_guard l(mu_);
        check_available(1, 1, where);
        return take();
    }
    /// Dequeues `n` elements stacked along a new dim 0 (QueueDequeueManyV2); `up_to` takes fewer
    /// (at least one) from a closed queue that holds fewer (QueueDequeueUpToV2).
    tuple dequeue_many(std::int64_t n, bool up_to, const location& where) {
        if (n < 0) throw invalid_argument_error(detail::cat("dequeue requested ", n, " < 0 elements"), where);
        if (o_.shapes.empty()) {
            throw invalid_argument_error(detail::cat(kind_text(), " '", o_.name, "''s DequeueMany and DequeueUpTo require ",
                                                     "the components to have specified shapes."),
                                         where, "give the queue's shapes attr (tf.train.shuffle_batch and batch do)");
        }
        std::lock_guard l(mu_);
        const std::int64_t k = n == 0 ? 0 : check_available(n, up_to ? 1 : n, where);
        std::vector<tuple> taken;
        taken.reserve(static_cast<std::size_t>(k));
        for (std::int64_t r = 0; r < k; ++r) taken.push_back(take());
        tuple out;
        for (std::size_t i = 0; i < o_.types.size(); ++i) {
            // a dim of -1 (PaddingFIFOQueue) is the largest among the elements taken: 0 when none
            std::vector<std::int64_t> d{k};
            for (auto x : o_.shapes[i].dims()) d.push_back(x < 0 ? 0 : x);
            for (const auto& e : taken) {
                for (std::size_t j = 0; j + 1 < d.size(); ++j) d[j + 1] = std::max(d[j + 1], e[i].dim(static_cast<int>(j)));
            }
            out.emplace_back(o_.types[i], graft::shape(d));  // zero-filled: the padding
            for (std::int64_t r = 0; r < k; ++r) copy_padded(out.back(), r, taken[static_cast<std::size_t>(r)][i]);
        }
        return out;
    }

private:
    static graft::shape row_shape(const tensor& c) {
        auto d = c.shape().dims();
        d.erase(d.begin());
        return graft::shape(d);
    }
    /// Checks dtypes and shapes; returns the batch size (1 for one element).
    std::int64_t check_tuple(const tuple& t, bool many, const location& where) const {
        if (t.size() != o_.types.size()) {
            throw invalid_argument_error(detail::cat("enqueue of ", t.size(), " components into ", kind_text(), " '",
                                                     o_.name, "' whose elements have ", o_.types.size()),
                                         where);
        }
        std::int64_t n = 1;
        for (std::size_t i = 0; i < t.size(); ++i) {
            if (t[i].type() != o_.types[i]) {
                throw invalid_argument_error(detail::cat("Type mismatch in tuple component ", i, ". Expected ",
                                                         dtype_name(o_.types[i]), ", got ", dtype_name(t[i].type())),
                                             where);
            }
            graft::shape s = t[i].shape();
            if (many) {
                if (t[i].rank() < 1) {
                    throw invalid_argument_error(detail::cat("EnqueueMany component ", i, " is a scalar; its dim 0 ",
                                                             "must count the elements"),
                                                 where);
                }
                if (i == 0) n = t[i].dim(0);
                if (t[i].dim(0) != n) {
                    throw invalid_argument_error(detail::cat("All input tensors must have the same size in the 0th ",
                                                             "dimension. Component 0 has ", n, ", component ", i,
                                                             " has ", t[i].dim(0)),
                                                 where);
                }
                s = row_shape(t[i]);
            }
            if (o_.kind == order::priority && i == 0 && s != graft::shape{}) {
                throw invalid_argument_error(detail::cat("PriorityQueue '", o_.name, "': component 0 must be an int64 ",
                                                         "scalar priority per element, got shape ", s.str(),
                                                         many ? " (per element, dim 0 removed)" : ""),
                                             where);
            }
            if (!o_.shapes.empty() && !fits(s, o_.shapes[i])) {
                throw invalid_argument_error(detail::cat("Shape mismatch in tuple component ", i, ". Expected ",
                                                         o_.shapes[i].str(), ", got ", s.str(),
                                                         many ? " (per element, dim 0 removed)" : ""),
                                             where);
            }
        }
        return n;
    }
    void check_room(std::int64_t n, const location& where) const {
        if (closed_) throw queue_closed_error(detail::cat(kind_text(), " '", o_.name, "' is closed."), where);
        const auto held = static_cast<std::int64_t>(items_.size());
        if (o_.capacity >= 0 && held + n > o_.capacity) {
            throw queue_blocked_error(detail::cat(kind_text(), " '", o_.name, "' holds ", held, " of its capacity ",
                                                  o_.capacity, "; enqueuing ", n, " more would block"),
                                      where, "graft runs single-threaded: dequeue elements before enqueuing more");
        }
    }
    /// How many elements a dequeue of `n` takes (>= `at_least` when closed); throws when it cannot.
    std::int64_t check_available(std::int64_t n, std::int64_t at_least, const location& where) const {
        const auto held = static_cast<std::int64_t>(items_.size());
        if (closed_) {
            if (held >= n) return n;
            if (held >= at_least && held > 0) return held;
            throw queue_closed_error(detail::cat(kind_text(), " '", o_.name, "' is closed and has insufficient ",
                                                 "elements (requested ", n, ", current size ", held, ")"),
                                     where);
        }
        const std::int64_t keep = o_.kind == order::shuffle ? o_.min_after_dequeue : 0;
        if (held - n >= keep) return n;
        throw queue_blocked_error(
            detail::cat(kind_text(), " '", o_.name, "' holds ", held, " elements; dequeuing ", n, " needs ", n + keep,
                        keep ? detail::cat(" (min_after_dequeue ", keep, ")") : std::string()),
            where, "TF would block here; graft runs single-threaded: its queue runner's enqueue op must run first");
    }
    /// s matches the queue's shape `want` (dims of -1 vary in a PaddingFIFOQueue).
    [[nodiscard]] bool fits(const graft::shape& s, const graft::shape& want) const {
        if (o_.kind != order::padding) return s == want;
        if (s.rank() != want.rank()) return false;
        for (int j = 0; j < s.rank(); ++j) {
            if (want.dim(j) >= 0 && want.dim(j) != s.dim(j)) return false;
        }
        return true;
    }
    /// Copies element `e` into row `r` of `out` (dims of out >= e's), its other cells left as they are.
    static void copy_padded(const tensor& out, std::int64_t r, const tensor& e) {
        const int rank = e.rank();
        if (rank == 0 || e.shape() == row_shape(out)) {
            out.slice(r, 1).reshaped(e.shape()).copy_from(e);
            return;
        }
        const std::int64_t inner = e.dim(rank - 1);
        const std::int64_t rows = inner ? e.num_elements() / inner : 0;
        // out's strides (in elements) over the element dims
        std::vector<std::int64_t> stride(static_cast<std::size_t>(rank), 1);
        for (int j = rank - 2; j >= 0; --j) stride[static_cast<std::size_t>(j)] = stride[static_cast<std::size_t>(j) + 1] * out.dim(j + 2);
        const std::int64_t row_elems = stride[0] * out.dim(1);
        std::vector<std::int64_t> idx(static_cast<std::size_t>(rank), 0);
        const bool str = e.type() == dtype::string;
        const std::size_t esz = str ? 0 : dtype_size(e.type());
        for (std::int64_t q = 0; q < rows; ++q) {
            std::int64_t at = r * row_elems;
            for (int j = 0; j + 1 < rank; ++j) at += idx[static_cast<std::size_t>(j)] * stride[static_cast<std::size_t>(j)];
            if (str) {
                for (std::int64_t x = 0; x < inner; ++x) out.data<std::string>()[at + x] = e.data<std::string>()[q * inner + x];
            } else {
                std::memcpy(static_cast<char*>(out.raw_data()) + static_cast<std::size_t>(at) * esz,
                            static_cast<const char*>(e.raw_data()) + static_cast<std::size_t>(q * inner) * esz,
                            static_cast<std::size_t>(inner) * esz);
            }
            for (int j = rank - 2; j >= 0; --j) {  // next row of e, odometer order
                if (++idx[static_cast<std::size_t>(j)] < e.dim(j)) break;
                idx[static_cast<std::size_t>(j)] = 0;
            }
        }
    }
    void push(tuple t) {
        if (o_.kind == order::priority) {
            // stable: after every element of the same or a smaller priority
            const std::int64_t p = t[0].data<std::int64_t>()[0];
            auto it = std::upper_bound(items_.begin(), items_.end(), p,
                                       [](std::int64_t v, const tuple& e) { return v < e[0].data<std::int64_t>()[0]; });
            items_.insert(it, std::move(t));
            return;
        }
        items_.push_back(std::move(t));
    }
    tuple take() {
        if (o_.kind != order::shuffle) {
            tuple t = std::move(items_.front());
            items_.pop_front();
            return t;
        }
        const auto i = static_cast<std::size_t>(gen_() % static_cast<std::uint32_t>(items_.size()));
        std::swap(items_[i], items_.back());
        tuple t = std::move(items_.back());
        items_.pop_back();
        return t;
    }

    options o_;
    mutable std::mutex mu_;
    std::deque<tuple> items_;
    bool closed_ = false;
    ops::nn_detail::single_sample gen_{};
};

}  // namespace graft::exec
