// graft/core/small_vector.hpp — a vector that keeps its first N elements inside the object and
// moves them to the heap only past N: the per-run plans of the elementwise ops (a broadcast's merged
// dims and its per-input strides) are built on every run of every Add or Mul, and as std::vectors
// they cost six heap allocations and frees for a [1] + [1] add.
//
//   graft::small_vector<std::int64_t, 8> dims;   // no allocation up to 8 elements
//   dims.push_back(6);
//   dims == std::vector<std::int64_t>{6};         // compares with a std::vector of the same type
//
// The std::vector operations the plans use: push_back, emplace_back, pop_back, resize, assign,
// reserve, clear, iteration, ==. T must be nothrow move-constructible. Moving a small_vector that
// lives on the heap steals the block; one held inside moves its elements.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace graft {

template <class T, std::size_t N>
class small_vector {
    static_assert(N > 0, "small_vector needs room for at least one element in place");
    static_assert(std::is_nothrow_move_constructible_v<T>, "small_vector moves its elements when it grows");

public:
    using value_type = T;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using reference = T&;
    using const_reference = const T&;
    using pointer = T*;
    using const_pointer = const T*;
    using iterator = T*;
    using const_iterator = const T*;

    small_vector() noexcept = default;
    explicit small_vector(size_type n) { resize(n); }
    small_vector(size_type n, const T& v) { assign(n, v); }
    small_vector(std::initializer_list<T> il) { assign(il.begin(), il.end()); }
    template <std::input_iterator It>
    small_vector(It first, It last) {
        assign(first, last);
    }
    small_vector(const small_vector& o) { assign(o.begin(), o.end()); }
    small_vector(small_vector&& o) noexcept { take(o); }
    small_vector& operator=(const small_vector& o) {
        if (this != &o) assign(o.begin(), o.end());
        return *this;
    }
    small_vector& operator=(small_vector&& o) noexcept {
        if (this != &o) {
            clear();
            release();
            take(o);
        }
        return *this;
    }
    small_vector& operator=(std::initializer_list<T> il) {
        assign(il.begin(), il.end());
        return *this;
    }
    ~small_vector() {
        clear();
        release();
    }

    [[nodiscard]] T* data() noexcept { return data_; }
    [[nodiscard]] const T* data() const noexcept { return data_; }
    [[nodiscard]] size_type size() const noexcept { return size_; }
    [[nodiscard]] size_type capacity() const noexcept { return cap_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
    /// True while the elements are held inside the object (no heap block).
    [[nodiscard]] bool is_inline() const noexcept { return data_ == in_place(); }

    iterator begin() noexcept { return data_; }
    iterator end() noexcept { return data_ + size_; }
    const_iterator begin() const noexcept { return data_; }
    const_iterator end() const noexcept { return data_ + size_; }
    T& operator[](size_type i) noexcept { return data_[i]; }
    const T& operator[](size_type i) const noexcept { return data_[i]; }
    T& front() noexcept { return data_[0]; }
    const T& front() const noexcept { return data_[0]; }
    T& back() noexcept { return data_[size_ - 1]; }
    const T& back() const noexcept { return data_[size_ - 1]; }

    void reserve(size_type n) {
        if (n > cap_) grow_to(n);
    }
    void clear() noexcept {
        std::destroy(begin(), end());
        size_ = 0;
    }
    void push_back(const T& v) { emplace_back(v); }
    void push_back(T&& v) { emplace_back(std::move(v)); }
    template <class... A>
    T& emplace_back(A&&... a) {
        if (size_ == cap_) {
            T v(std::forward<A>(a)...);  // made first: `a` may be one of this vector's own elements
            grow_to(cap_ * 2);
            ::new (static_cast<void*>(data_ + size_)) T(std::move(v));
        } else {
            ::new (static_cast<void*>(data_ + size_)) T(std::forward<A>(a)...);
        }
        return data_[size_++];
    }
    void pop_back() noexcept { std::destroy_at(data_ + --size_); }
    void resize(size_type n) {
        if (n <= size_) return shrink(n);
        reserve(n);
        std::uninitialized_value_construct(data_ + size_, data_ + n);
        size_ = n;
    }
    void resize(size_type n, const T& v) {
        if (n <= size_) return shrink(n);
        if (n > cap_) {
            const T copy(v);  // `v` may be one of this vector's own elements
            grow_to(n);
            std::uninitialized_fill(data_ + size_, data_ + n, copy);
        } else {
            std::uninitialized_fill(data_ + size_, data_ + n, v);
        }
        size_ = n;
    }
    void assign(size_type n, const T& v) {
        const T copy(v);
        clear();
        reserve(n);
        std::uninitialized_fill_n(data_, n, copy);
        size_ = n;
    }
    template <std::input_iterator It>
    void assign(It first, It last) {
        clear();
        if constexpr (std::forward_iterator<It>) reserve(static_cast<size_type>(std::distance(first, last)));
        for (; first != last; ++first) emplace_back(*first);
    }

    friend bool operator==(const small_vector& a, const small_vector& b) {
        return std::equal(a.begin(), a.end(), b.begin(), b.end());
    }
    friend bool operator==(const small_vector& a, const std::vector<T>& b) {
        return std::equal(a.begin(), a.end(), b.begin(), b.end());
    }

private:
    T* in_place() noexcept { return reinterpret_cast<T*>(storage_); }
    const T* in_place() const noexcept { return reinterpret_cast<const T*>(storage_); }

    void shrink(size_type n) noexcept {
        std::destroy(data_ + n, data_ + size_);
        size_ = n;
    }
    /// Moves the elements into a heap block of n >= size() elements.
    void grow_to(size_type n) {
        std::allocator<T> alloc;
        T* block = alloc.allocate(n);
        std::uninitialized_move(begin(), end(), block);
        std::destroy(begin(), end());
        release();
        data_ = block;
        cap_ = n;
    }
    /// Frees the heap block, if any (its elements already destroyed or moved out).
    void release() noexcept {
        if (!is_inline()) std::allocator<T>().deallocate(data_, cap_);
        data_ = in_place();
        cap_ = N;
    }
    /// This (empty, in place) takes o's elements; o is left empty and in place.
    void take(small_vector& o) noexcept {
        if (!o.is_inline()) {
            data_ = o.data_;
            cap_ = o.cap_;
            size_ = o.size_;
            o.data_ = o.in_place();
            o.cap_ = N;
            o.size_ = 0;
            return;
        }
        std::uninitialized_move(o.begin(), o.end(), data_);
        size_ = o.size_;
        o.clear();
    }

    alignas(T) unsigned char storage_[N * sizeof(T)];
    T* data_ = in_place();
    size_type size_ = 0;
    size_type cap_ = N;
};

}  // namespace graft
