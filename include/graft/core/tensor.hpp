// graft/core/tensor.hpp — a dense, row-major, reference-counted tensor like TensorFlow's.
//
//   graft::tensor t(graft::dtype::float32, {2, 3});    // zero-filled, 64-byte aligned
//   t.matrix<float>()(1, 2) = 5.f;                      // Eigen TensorMap access (flat, vec, nd<T,N>)
//   graft::tensor v = t.reshaped({3, 2});               // a view: shares t's buffer
//   graft::tensor s = graft::tensor::from_vector<std::string>({2}, {"a", "bc"});
//
// Copies of a tensor share the buffer (like TF); clone() makes a deep copy.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "graft/core/config.hpp"
#include <unsupported/Eigen/CXX11/Tensor>

#include "graft/core/buffer.hpp"
#include "graft/core/dtype.hpp"
#include "graft/core/error.hpp"
#include "graft/core/shape.hpp"

namespace graft {

template <class T, int N>
using tensor_map = Eigen::TensorMap<Eigen::Tensor<T, N, Eigen::RowMajor, Eigen::DenseIndex>, Eigen::Unaligned>;
template <class T, int N>
using const_tensor_map =
    Eigen::TensorMap<Eigen::Tensor<const T, N, Eigen::RowMajor, Eigen::DenseIndex>, Eigen::Unaligned>;

class tensor {
public:
    /// An empty (invalid) tensor; valid() is false.
    tensor() = default;

    /// A new zero-filled host tensor (empty strings for dtype string). Throws if `s` is not fully
    /// defined or `t` has no fixed element size and is not string.
    tensor(dtype t, graft::shape s) : tensor(t, std::move(s), true) {}

    /// A new host tensor whose fixed-size contents are left uninitialized (for kernels that overwrite
    /// every element). Strings are still constructed empty.
    static tensor uninitialized(dtype t, graft::shape s) { return tensor(t, std::move(s), false); }

    /// A zero-copy view of external memory (e.g. an mmap'd shard). `owner` is kept alive as long as
    /// any tensor refers to the memory. `data` must hold num_elements * dtype_size bytes.
    static tensor view(dtype t, const graft::shape& s, const void* data, std::shared_ptr<const void> owner,
                       device dev = {}) {
        tensor r;
        r.dtype_ = base_type(t);
        r.shape_ = s;
        check_pod(r.dtype_, "tensor::view");
        auto bytes = static_cast<std::size_t>(s.num_elements()) * dtype_size(r.dtype_);
        r.buf_ = buffer::wrap(const_cast<void*>(data), bytes, std::move(owner), dev);
        return r;
    }

    /// A tensor of `s` that refers to `buf` starting at byte `offset` (no copy).
    static tensor from_buffer(dtype t, const graft::shape& s, std::shared_ptr<buffer> buf, std::size_t offset = 0) {
        tensor r;
        r.dtype_ = base_type(t);
        r.shape_ = s;
        auto need = r.nbytes();
        if (!buf || offset + need > buf->size()) {
            throw invalid_argument_error(detail::cat("buffer of ", buf ? buf->size() : 0,
                                                     " bytes too small for ", dtype_name(t), s.str(),
                                                     " at offset ", offset));
        }
        r.buf_ = std::move(buf);
        r.offset_ = offset;
        return r;
    }

    /// A tensor of shape `s` holding `values` (row-major). Throws if the counts differ.
    template <class T>
    static tensor from_vector(const graft::shape& s, const std::vector<T>& values) {
        tensor r(dtype_of<T>, s, false);
        if (static_cast<std::int64_t>(values.size()) != r.num_elements()) {
            throw invalid_argument_error(detail::cat("from_vector: ", values.size(), " values for shape ",
                                                     s.str(), " (", r.num_elements(), " elements)"));
        }
        auto* d = r.data<T>();
        for (std::size_t i = 0; i < values.size(); ++i) d[i] = values[i];
        return r;
    }
    /// A rank-1 tensor holding `values`.
    template <class T>
    static tensor from_vector(const std::vector<T>& values) {
        return from_vector<T>(graft::shape{static_cast<std::int64_t>(values.size())}, values);
    }
    /// A scalar tensor holding `v`.
    template <class T>
    static tensor scalar_of(T v) {
        tensor r(dtype_of<T>, graft::shape{}, false);
        *r.data<T>() = std::move(v);
        return r;
    }
    static tensor scalar_of(const char* v) { return scalar_of(std::string(v)); }

    [[nodiscard]] bool valid() const { return static_cast<bool>(buf_); }
    [[nodiscard]] dtype type() const { return dtype_; }
    [[nodiscard]] const graft::shape& shape() const { return shape_; }
    [[nodiscard]] int rank() const { return shape_.rank(); }
    [[nodiscard]] std::int64_t dim(int i) const { return shape_.dim(i); }
    [[nodiscard]] std::int64_t num_elements() const { return shape_.num_elements(); }
    /// Bytes of the element buffer (for strings: num_elements * sizeof(std::string)).
    [[nodiscard]] std::size_t nbytes() const {
        return static_cast<std::size_t>(num_elements()) * element_bytes(dtype_);
    }
    [[nodiscard]] const device& dev() const { return buf_ ? buf_->dev() : host_device(); }
    [[nodiscard]] bool on_host() const { return dev().is_cpu(); }
    [[nodiscard]] const std::shared_ptr<buffer>& buf() const { return buf_; }
    [[nodiscard]] std::size_t byte_offset() const { return offset_; }

    /// Raw pointer to the first element (host or device memory).
    [[nodiscard]] void* raw_data() const {
        return buf_ ? static_cast<char*>(buf_->data()) + offset_ : nullptr;
    }
    /// True when the data pointer is 64-byte aligned.
    [[nodiscard]] bool is_aligned() const {
        return reinterpret_cast<std::uintptr_t>(raw_data()) % buffer_alignment == 0;
    }
    /// True when both tensors read and write the same memory block.
    [[nodiscard]] bool shares_buffer_with(const tensor& o) const { return buf_ && buf_ == o.buf_; }
    /// True when no other tensor refers to this buffer (safe to write in place).
    [[nodiscard]] bool buffer_unique() const { return buf_ && buf_.use_count() == 1; }

    /// Typed pointer to host data; throws invalid_argument_error on dtype mismatch or device data.
    template <class T>
    [[nodiscard]] T* data() const {
        check_access<T>();
        return static_cast<T*>(raw_data());
    }

    /// Eigen views (row-major, unaligned maps). Throw on dtype mismatch or rank mismatch.
    template <class T>
    [[nodiscard]] tensor_map<T, 1> flat() const {
        return tensor_map<T, 1>(data<T>(), static_cast<Eigen::DenseIndex>(num_elements()));
    }
    template <class T>
    [[nodiscard]] tensor_map<T, 1> vec() const { return nd<T, 1>(); }
    template <class T>
    [[nodiscard]] tensor_map<T, 2> matrix() const { return nd<T, 2>(); }
    template <class T>
    [[nodiscard]] tensor_map<T, 0> scalar() const { return nd<T, 0>(); }
    /// Rank-N Eigen view (TF's Tensor::tensor<T, N>(); named nd because `tensor` is this class).
    template <class T, int N>
    [[nodiscard]] tensor_map<T, N> nd() const {
        if (rank() != N) {
            throw invalid_argument_error(detail::cat("tensor<", dtype_name(dtype_of<T>), ",", N,
                                                     "> asked of a rank-", rank(), " tensor ",
                                                     shape_.str()));
        }
        Eigen::array<Eigen::DenseIndex, N> d;
        for (int i = 0; i < N; ++i) d[static_cast<std::size_t>(i)] = shape_.dims()[static_cast<std::size_t>(i)];
        return tensor_map<T, N>(data<T>(), d);
    }
    /// Flattened to 2-D as [prod(dims[0:k]), prod(dims[k:])].
    template <class T>
    [[nodiscard]] tensor_map<T, 2> flat_inner_outer(int k) const {
        std::int64_t a = 1, b = 1;
        for (int i = 0; i < rank(); ++i) (i < k ? a : b) *= shape_.dims()[static_cast<std::size_t>(i)];
        return tensor_map<T, 2>(data<T>(), a, b);
    }

    /// Element i of the flattened tensor (bounds-checked).
    template <class T>
    [[nodiscard]] T& at(std::int64_t i) const {
        if (i < 0 || i >= num_elements()) {
            throw invalid_argument_error(detail::cat("index ", i, " out of range for ", shape_.str()));
        }
        return data<T>()[i];
    }

    /// The same memory seen with another shape of equal element count (no copy).
    [[nodiscard]] graft::tensor reshaped(const graft::shape& s) const {
        if (s.num_elements() != num_elements()) {
            throw shape_error(detail::cat("cannot reshape ", shape_.str(), " (", num_elements(),
                                          " elements) to ", s.str(), " (", s.num_elements(), ")"));
        }
        graft::tensor r = *this;
        r.shape_ = s;
        return r;
    }

    /// Rows [start, start+len) along dim 0, sharing memory (like TF's Tensor::Slice).
    [[nodiscard]] graft::tensor slice(std::int64_t start, std::int64_t len) const {
        if (rank() < 1 || start < 0 || len < 0 || start + len > dim(0)) {
            throw shape_error(detail::cat("slice [", start, ", ", start + len, ") out of range for ",
                                          shape_.str()));
        }
        auto d = shape_.dims();
        std::int64_t row = 1;
        for (std::size_t i = 1; i < d.size(); ++i) row *= d[i];
        d[0] = len;
        graft::tensor r = *this;
        r.shape_ = graft::shape(d);
        r.offset_ = offset_ + static_cast<std::size_t>(start * row) * element_bytes(dtype_);
        return r;
    }

    /// A deep copy in freshly allocated host memory (aligned).
    [[nodiscard]] graft::tensor clone() const {
        require_host("clone");
        graft::tensor r(dtype_, shape_, false);
        if (dtype_ == dtype::string) {
            auto* s = data<std::string>();
            auto* d = r.data<std::string>();
            for (std::int64_t i = 0; i < num_elements(); ++i) d[i] = s[i];
        } else if (nbytes()) {
            std::memcpy(r.raw_data(), raw_data(), nbytes());
        }
        return r;
    }

    /// Copies `src`'s elements into this tensor (same dtype and element count). Throws otherwise.
    void copy_from(const graft::tensor& src) const {
        if (src.dtype_ != dtype_ || src.num_elements() != num_elements()) {
            throw invalid_argument_error(detail::cat("copy_from: ", dtype_name(src.dtype_), src.shape_.str(),
                                                     " into ", dtype_name(dtype_), shape_.str()));
        }
        require_host("copy_from");
        if (dtype_ == dtype::string) {
            for (std::int64_t i = 0; i < num_elements(); ++i) data<std::string>()[i] = src.data<std::string>()[i];
        } else if (nbytes() && raw_data() != src.raw_data()) {
            std::memmove(raw_data(), src.raw_data(), nbytes());
        }
    }

    /// "float32[2,3]".
    [[nodiscard]] std::string describe() const { return dtype_name(dtype_) + shape_.str(); }

private:
    tensor(dtype t, graft::shape s, bool zero) : dtype_(base_type(t)), shape_(std::move(s)) {
        if (dtype_ == dtype::string) {
            buf_ = buffer::allocate_strings(static_cast<std::size_t>(shape_.num_elements()));
            return;
        }
        check_pod(dtype_, "tensor");
        const auto n = static_cast<std::size_t>(shape_.num_elements());
        if (dtype_size(dtype_) != 0 && n > (SIZE_MAX >> 1) / dtype_size(dtype_)) {
            throw shape_error(detail::cat("a ", describe(), " tensor needs more bytes than a size_t holds"));
        }
        buf_ = buffer::allocate_host(n * dtype_size(dtype_), zero);
    }

    static const device& host_device() {
        static const device d{};
        return d;
    }
    static std::size_t element_bytes(dtype t) {
        return t == dtype::string ? sizeof(std::string) : dtype_size(t);
    }
    static void check_pod(dtype t, const char* who) {
        if (!is_pod_dtype(t)) {
            throw unimplemented_error(detail::cat(who, ": dtype ", dtype_name(t),
                                                  " has no fixed-size dense layout"));
        }
    }
    void require_host(const char* who) const {
        if (!on_host()) {
            throw invalid_argument_error(detail::cat(who, ": tensor lives on ", dev().str()), {},
                                         "copy it to the host first");
        }
    }
    template <class T>
    void check_access() const {
        if (!buf_) throw invalid_argument_error("access to an empty tensor");
        if (dtype_of<T> != dtype_ && !(sizeof(T) == dtype_size(dtype_) && same_storage<T>())) {
            throw invalid_argument_error(detail::cat("tensor is ", dtype_name(dtype_), " but was read as ",
                                                     dtype_name(dtype_of<T>)));
        }
        require_host("data");
    }
    template <class T>
    bool same_storage() const {
        // Quantized types are read through their storage integer type.
        switch (dtype_) {
            case dtype::qint8: return std::is_same_v<T, std::int8_t>;
            case dtype::quint8: return std::is_same_v<T, std::uint8_t>;
            case dtype::qint16: return std::is_same_v<T, std::int16_t>;
            case dtype::quint16: return std::is_same_v<T, std::uint16_t>;
            case dtype::qint32: return std::is_same_v<T, std::int32_t>;
            default: return false;
        }
    }

    dtype dtype_ = dtype::invalid;
    graft::shape shape_;
    std::shared_ptr<buffer> buf_;
    std::size_t offset_ = 0;
};

}  // namespace graft
