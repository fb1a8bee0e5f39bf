// graft/exec/resources.hpp — the per-run objects TF1 control flow creates: TensorArray
// (TensorArrayV3 and its ops: dynamic_rnn's inputs and outputs) and Stack (StackV2: the forward
// values a gradient while loop pops back in reverse order).
//
// A resource travels along edges as a dtype::resource scalar tensor whose buffer keeps the object
// alive (handle_of / resource_of), so Enter, Exit, Switch, Merge, NextIteration and Identity pass
// it on like any tensor, and the object lives as long as some value of the run refers to it — TF's
// per-step resources, without any bookkeeping in the executor.
//
//   auto ta = std::make_shared<graft::exec::tensor_array>(opts, 3);
//   graft::tensor h = graft::exec::handle_of(ta);          // what TensorArrayV3 outputs
//   graft::exec::resource_of<graft::exec::tensor_array>(h, "TensorArrayReadV3")->read(0);
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/core/tensor.hpp"
#include "graft/ops/binary.hpp"

namespace graft::exec {

/// Base of the objects a resource handle tensor refers to.
class run_resource {
public:
    static constexpr std::uint64_t tag_value = 0x67726166742d7273ull;  // "graft-rs"
    run_resource() = default;
    run_resource(const run_resource&) = delete;
    run_resource& operator=(const run_resource&) = delete;
    virtual ~run_resource() = default;
    /// "TensorArray", "Stack": for error messages.
    [[nodiscard]] virtual const char* kind() const = 0;

    /// False for memory that is no run_resource (a handle tensor from elsewhere).
    [[nodiscard]] bool tagged() const { return tag_ == tag_value; }

private:
    std::uint64_t tag_ = tag_value;
};

/// The handle tensor (dtype resource, scalar) that refers to `r` and keeps it alive. Never throws
/// (except bad_alloc).
template <class R>
tensor handle_of(std::shared_ptr<R> r) {
    auto* base = static_cast<run_resource*>(r.get());
    return tensor::from_buffer(dtype::resource, shape{}, buffer::wrap(base, 0, std::move(r)));
}

/// The object of type R behind `handle` (made by handle_of). Throws invalid_argument_error naming
/// `who` when the tensor is not such a handle or refers to another kind of resource.
template <class R>
R* resource_of(const tensor& handle, const char* who) {
    auto bad = [&](const std::string& why) -> R* {
        throw invalid_argument_error(detail::cat(who, " needs a handle made by graft's ", R::kind_name,
                                                 " op, but its handle input ", why),
                                     {}, "feed the handle output of the op that created it");
    };
    if (!handle.valid()) return bad("is empty");
    if (handle.type() != dtype::resource && handle.type() != dtype::string) {
        return bad("is " + handle.describe());
    }
    auto* base = static_cast<run_resource*>(handle.buf()->data());
    if (!base || handle.buf()->owns_memory() || handle.buf()->size() != 0 || handle.byte_offset() != 0 ||
        !base->tagged()) {
        return bad("is a " + handle.describe() + " tensor that is no such handle");
    }
    auto* r = dynamic_cast<R*>(base);
    if (!r) return bad(std::string("refers to a ") + base->kind());
    return r;
}

/// A TensorArray (TF's tensor_array.h semantics): `size` slots of one dtype, each written once
/// (grad arrays sum repeated writes), read (and cleared with clear_after_read), gathered,
/// scattered, concatenated and split; an array of gradients is keyed by source on its forward one.
/// Every method throws invalid_argument_error with TF's message on misuse.
class tensor_array : public run_resource {
public:
    static constexpr const char* kind_name = "TensorArray";
    struct options {
        dtype type = dtype::float32;
        shape element_shape = shape::unknown_rank();
        bool dynamic_size = false;
        bool clear_after_read = true;
        bool identical_element_shapes = false;
        bool multiple_writes_aggregate = false;  ///< gradient arrays: repeated writes add up
        bool is_grad = false;
        std::string name;
    };

    tensor_array(options o, std::int64_t size) : o_(std::move(o)) {
        if (size < 0) fail(detail::cat("size must be >= 0, given ", size));
        slots_.resize(static_cast<std::size_t>(size));
    }
    [[nodiscard]] const char* kind() const override { return kind_name; }
    [[nodiscard]] dtype type() const { return o_.type; }
    [[nodiscard]] const std::string& name() const { return o_.name; }

    /// Number of slots. Throws when closed.
    std::int64_t size() {
        std::lock_guard l(mu_);
        check_open();
        return static_cast<std::int64_t>(slots_.size());
    }
    /// The element shape known so far (element_shape attr, merged with writes for
    /// identical_element_shapes arrays).
    shape element_shape() {
        std::lock_guard l(mu_);
        return o_.element_shape;
    }

    /// Writes `v` at `index` (grows a dynamic_size array). Throws as TF does.
    void write(std::int64_t index, const tensor& v) {
        std::lock_guard l(mu_);
        locked_write(index, v);
    }
    /// The element at `index` (zeros for a gradient slot never written, or for an unwritten slot of
    /// an array with a fully defined element shape). Throws as TF does.
    tensor read(std::int64_t index) {
        std::lock_guard l(mu_);
        return locked_read(index);
    }
    /// The elements at `indices` stacked along a new dim 0; `want` (the op's element_shape attr)
    /// gives the element shape of an empty gather. Throws as TF does.
    tensor gather(const std::vector<std::int64_t>& indices, const shape& want) {
        std::lock_guard l(mu_);
        check_open();
        if (indices.empty()) {
            shape es = want.fully_defined() ? want : o_.element_shape;
            if (!es.fully_defined()) {
                fail(detail::cat("TensorArray has size zero, but element shape ", es.str(),
                                 " is not fully defined. Currently only static shapes are supported when packing "
                                 "zero-size TensorArrays."));
            }
            auto d = es.dims();
            d.insert(d.begin(), 0);
            return tensor(o_.type, shape(d));
        }
        std::vector<tensor> vals;
        vals.reserve(indices.size());
        for (auto i : indices) vals.push_back(locked_read(i));
        for (std::size_t i = 1; i < vals.size(); ++i) {
            if (vals[i].shape() != vals[0].shape()) {
                fail(detail::cat("TensorArray has inconsistent shapes.  Index 0 has shape: ", vals[0].shape().str(),
                                 " but index ", i, " has shape: ", vals[i].shape().str()));
            }
        }
        auto d = vals[0].shape().dims();
        d.insert(d.begin(), static_cast<std::int64_t>(vals.size()));
        tensor out = tensor::uninitialized(o_.type, shape(d));
        auto rows = vals[0].shape().dims();
        rows.insert(rows.begin(), 1);
        for (std::size_t i = 0; i < vals.size(); ++i) {
            out.slice(static_cast<std::int64_t>(i), 1).copy_from(vals[i].reshaped(shape(rows)));
        }
        return out;
    }
    /// Writes row i of `value` at indices[i]. Throws as TF does.
    void scatter(const std::vector<std::int64_t>& indices, const tensor& value) {
        std::lock_guard l(mu_);
        check_open();
        if (value.rank() < 1) {
            fail("Expected value to be at least a vector, but received shape: " + value.shape().str());
        }
        if (static_cast<std::int64_t>(indices.size()) != value.dim(0)) {
            fail(detail::cat("Expected len(indices) == values.shape[0], but saw: ", indices.size(), " vs. ",
                             value.dim(0)));
        }
        if (!o_.dynamic_size) {
            for (auto i : indices) {
                if (i >= static_cast<std::int64_t>(slots_.size())) {
                    fail(detail::cat("Tried to write to index ", i, " but array is not resizeable and size is: ",
                                     slots_.size()));
                }
            }
        }
        auto d = value.shape().dims();
        d.erase(d.begin());
        for (std::size_t i = 0; i < indices.size(); ++i) {
            locked_write(indices[i], value.slice(static_cast<std::int64_t>(i), 1).reshaped(shape(d)));
        }
    }
    /// All elements concatenated along dim 0, and each one's dim 0 (int64); `except0` (the op's
    /// element_shape_except0 attr) shapes an empty result. Throws as TF does.
    std::pair<tensor, tensor> concat(const shape& except0) {
        std::lock_guard l(mu_);
        check_open();
        if (slots_.empty()) {
            if (!except0.fully_defined()) {
                fail(detail::cat("TensorArray has size zero, but element_shape_except0 ", except0.str(),
                                 " is not fully defined. Currently only static shapes are supported when "
                                 "concatenating zero-size TensorArrays."));
            }
            auto d = except0.dims();
            d.insert(d.begin(), 0);
            return {tensor(o_.type, shape(d)), tensor(dtype::int64, shape{0})};
        }
        std::vector<tensor> vals;
        vals.reserve(slots_.size());
        for (std::size_t i = 0; i < slots_.size(); ++i) vals.push_back(locked_read(static_cast<std::int64_t>(i)));
        tensor lengths(dtype::int64, shape{static_cast<std::int64_t>(vals.size())});
        std::int64_t total = 0;
        auto rest = [](const tensor& t) {
            auto d = t.shape().dims();
            d.erase(d.begin());
            return shape(d);
        };
        for (std::size_t i = 0; i < vals.size(); ++i) {
            if (vals[i].rank() < 1) {
                fail(detail::cat("Concat saw a scalar shape at index ", i,
                                 " but requires at least vectors.  Did you mean to call TensorArray.pack instead?"));
            }
            if (rest(vals[i]) != rest(vals[0])) {
                fail(detail::cat("TensorArray has inconsistent shapes.  Index 0 has (excepting dimension 0) shape: ",
                                 rest(vals[0]).str(), " but index ", i,
                                 " has (excepting dimension 0) shape: ", rest(vals[i]).str()));
            }
            lengths.data<std::int64_t>()[i] = vals[i].dim(0);
            total += vals[i].dim(0);
        }
        auto d = vals[0].shape().dims();
        d[0] = total;
        tensor out = tensor::uninitialized(o_.type, shape(d));
        std::int64_t at = 0;
        for (auto& v : vals) {
            out.slice(at, v.dim(0)).copy_from(v);
            at += v.dim(0);
        }
        return {out, lengths};
    }
    /// Writes value[sum(lengths[:i]) : sum(lengths[:i+1])] at each index i. Throws as TF does.
    void split(const tensor& value, const std::vector<std::int64_t>& lengths) {
        std::lock_guard l(mu_);
        check_open();
        if (value.rank() < 1) {
            fail("Expected value to be at least a vector, but received shape: " + value.shape().str());
        }
        std::int64_t sum = 0;
        for (auto n : lengths) {
            if (n < 0) fail(detail::cat("lengths must be >= 0, given ", n));
            sum += n;
        }
        if (sum != value.dim(0)) {
            fail(detail::cat("Expected sum of lengths to be equal to values.shape[0], but sum of lengths is ", sum,
                             " and value's shape is: ", value.shape().str()));
        }
        if (!o_.dynamic_size && lengths.size() != slots_.size()) {
            fail(detail::cat("TensorArray's size is not equal to the size of lengths (", lengths.size(), " vs. ",
                             slots_.size(), "), and the TensorArray is not marked as dynamically resizeable"));
        }
        std::int64_t at = 0;
        for (std::size_t i = 0; i < lengths.size(); ++i) {
            locked_write(static_cast<std::int64_t>(i), value.slice(at, lengths[i]));
            at += lengths[i];
        }
    }
    /// Releases every element; later use fails. Never throws.
    void close() {
        std::lock_guard l(mu_);
        slots_.clear();
        closed_ = true;
    }

    /// The gradient array for `source` (made on first call, TF's TensorArrayGrad): same size, not
    /// resizeable, repeated writes add up, each slot written here reads as zeros of the forward
    /// element's shape (with `prepend` dims in front) until a gradient is written. Turns this array's
    /// dynamic_size off. Throws when closed or when this array aggregated writes itself.
    std::shared_ptr<tensor_array> grad(const std::string& source, const std::vector<std::int64_t>* prepend) {
        std::lock_guard l(mu_);
        check_open();
        if (aggregated_) {
            fail("Unable to create a gradients TensorArray for " + o_.name +
                 ".  Perhaps you used the multiple_writes_aggregate flag on a previous write?  Gradient calculation "
                 "is impossible when multiple writes are performed to the same index.");
        }
        o_.dynamic_size = false;
        auto it = grads_.find(source);
        if (it != grads_.end()) return it->second;
        options g;
        g.type = o_.type;
        g.element_shape = o_.element_shape;
        if (prepend) g.element_shape = prepended(*prepend, o_.element_shape);
        g.identical_element_shapes = o_.identical_element_shapes;
        g.multiple_writes_aggregate = true;
        g.is_grad = true;
        g.clear_after_read = true;
        g.name = o_.name + "@" + source;
        auto ga = std::make_shared<tensor_array>(std::move(g), static_cast<std::int64_t>(slots_.size()));
        for (std::size_t i = 0; i < slots_.size(); ++i) {
            if (!slots_[i].written) continue;
            ga->slots_[i].shp = prepend ? prepended(*prepend, slots_[i].shp) : slots_[i].shp;
            ga->slots_[i].written = true;
        }
        grads_.emplace(source, ga);
        return ga;
    }

private:
    struct slot {
        tensor t;           // empty after a clearing read, or for a gradient slot holding only a shape
        graft::shape shp;   // the written value's shape
        bool written = false;
        bool read = false;
        bool cleared = false;
    };

    [[noreturn]] void fail(const std::string& msg) const { throw invalid_argument_error(msg); }
    [[noreturn]] void fail_at(const std::string& msg) const { fail("TensorArray " + o_.name + ": " + msg); }
    void check_open() const {
        if (closed_) fail("TensorArray " + o_.name + " has already been closed.");
    }
    static shape prepended(const std::vector<std::int64_t>& front, const shape& s) {
        if (!s.rank_known()) return s;
        std::vector<std::int64_t> d = front;
        d.insert(d.end(), s.dims().begin(), s.dims().end());
        return shape(d);
    }

    void locked_write(std::int64_t index, const tensor& v) {
        check_open();
        if (index < 0 || (!o_.dynamic_size && index >= static_cast<std::int64_t>(slots_.size()))) {
            fail_at(detail::cat("Tried to write to index ", index, " but array is not resizeable and size is: ",
                                slots_.size()));
        }
        if (index >= static_cast<std::int64_t>(slots_.size())) slots_.resize(static_cast<std::size_t>(index) + 1);
        slot& s = slots_[static_cast<std::size_t>(index)];
        if (v.type() != o_.type) {
            fail_at(detail::cat("Could not write to TensorArray index ", index, " because the value dtype is ",
                                dtype_name(v.type()), " but TensorArray dtype is ", dtype_name(o_.type), "."));
        }
        if (!o_.element_shape.compatible_with(v.shape())) {
            fail_at(detail::cat("Could not write to TensorArray index ", index, " because the value shape is ",
                                v.shape().str(), " which is incompatible with the TensorArray's inferred element "
                                "shape: ", o_.element_shape.str(), " (consider setting infer_shape=False)."));
        }
        if (o_.identical_element_shapes && !o_.element_shape.fully_defined()) o_.element_shape = v.shape();
        if (s.read) {
            fail_at(detail::cat("Could not write to TensorArray index ", index, " because it has already been read."));
        }
        if (!o_.multiple_writes_aggregate && s.written) {
            fail_at(detail::cat("Could not write to TensorArray index ", index,
                                " because it has already been written to."));
        }
        if (s.written) {
            if (v.shape() != s.shp) {
                fail_at(detail::cat("Could not aggregate to TensorArray index ", index, " because the existing shape is ",
                                    s.shp.str(), " but the new input shape is ", v.shape().str(), "."));
            }
            if (!s.t.valid()) {
                s.t = v;
            } else {
                s.t = ops::add(s.t, v);
                aggregated_ = true;
            }
            return;
        }
        s.t = v;
        s.shp = v.shape();
        s.written = true;
    }

    tensor locked_read(std::int64_t index) {
        check_open();
        const auto n = static_cast<std::int64_t>(slots_.size());
        if (index < 0 || (!o_.is_grad && index >= n)) {
            fail(detail::cat("Tried to read from index ", index, " but array size is: ", n));
        }
        if (index >= n || !slots_[static_cast<std::size_t>(index)].written) {
            // TF returns zeros here: a gradient slot no gradient reached, or an unwritten slot whose
            // element shape is known.
            shape es;
            if (o_.is_grad && index < n && slots_[static_cast<std::size_t>(index)].shp.rank() > 0) {
                es = slots_[static_cast<std::size_t>(index)].shp;
            } else if (!o_.element_shape.fully_defined()) {
                fail_at(detail::cat("Could not read from TensorArray index ", index,
                                    " because it has not yet been written to.  The element shape ",
                                    o_.element_shape.str(), " is not fully defined, so no zeros can stand in."));
            } else {
                es = o_.element_shape;
            }
            return tensor(o_.type, es);
        }
        slot& s = slots_[static_cast<std::size_t>(index)];
        if (s.cleared) {
            fail_at(detail::cat("Could not read index ", index,
                                " twice because it was cleared after a previous read (perhaps try setting "
                                "clear_after_read = false?)."));
        }
        tensor r = s.t.valid() ? s.t : tensor(o_.type, s.shp);
        if (o_.clear_after_read) {
            s.t = tensor{};
            s.cleared = true;
        } else {
            s.t = r;
        }
        s.read = true;
        return r;
    }

    std::mutex mu_;
    options o_;
    std::vector<slot> slots_;
    bool closed_ = false;
    bool aggregated_ = false;
    std::map<std::string, std::shared_ptr<tensor_array>> grads_;
};

/// A stack of tensors of one dtype (TF's StackV2): push, pop last-in first-out, close. Every method
/// throws invalid_argument_error with TF's message on misuse.
class tensor_stack : public run_resource {
public:
    static constexpr const char* kind_name = "Stack";
    tensor_stack(dtype type, std::int64_t max_size, std::string name)
        : type_(type), max_size_(max_size), name_(std::move(name)) {}
    [[nodiscard]] const char* kind() const override { return kind_name; }

    /// Pushes `v`. Throws when closed, full (max_size >= 0) or of another dtype.
    void push(const tensor& v) {
        std::lock_guard l(mu_);
        check(v.type());
        if (max_size_ >= 0 && static_cast<std::int64_t>(items_.size()) >= max_size_) {
            throw invalid_argument_error(detail::cat("Stack[", name_, "] overflowed its max_size (", max_size_, ")"));
        }
        items_.push_back(v);
    }
    /// Pops the last pushed tensor. Throws when closed, empty or asked for another dtype.
    tensor pop(dtype want) {
        std::lock_guard l(mu_);
        check(want);
        if (items_.empty()) throw invalid_argument_error("Stack[" + name_ + "] is empty.");
        tensor t = std::move(items_.back());
        items_.pop_back();
        return t;
    }
    /// Drops every element; later use fails. Never throws.
    void close() {
        std::lock_guard l(mu_);
        items_.clear();
        closed_ = true;
    }
    [[nodiscard]] std::size_t size() {
        std::lock_guard l(mu_);
        return items_.size();
    }

private:
    void check(dtype t) const {
        if (closed_) throw invalid_argument_error("Stack[" + name_ + "] has already been closed.");
        if (t != type_) {
            throw invalid_argument_error(detail::cat("Stack[", name_, "] holds ", dtype_name(type_), " but the op uses ",
                                                     dtype_name(t)));
        }
    }
    std::mutex mu_;
    dtype type_;
    std::int64_t max_size_;
    std::string name_;
    std::vector<tensor> items_;
    bool closed_ = false;
};

}  // namespace graft::exec
