// BoundedTtlCache: a map from keys to values that forgets on three counts: an entry is served
// only until the expiry its Put gave it; at most `capacity` entries are kept, the least recently
// used going first; and Erase/EraseIf/Clear drop entries at once (invalidation events).
//
// A value loaded from its owner while an invalidation happens must not be put back stale (the
// read saw the row before the change, the answer arrived after the event). So every
// invalidation bumps generation(): callers take generation() before asking the owner and pass it
// to Put(), which ignores the value when any invalidation happened in between.
//
// Times are whatever monotonic unit the caller supplies (tests drive the clock). Values are
// copied out; keep them small or share them through shared_ptr<const T>.
// Thread-safe: every method takes the one mutex; nothing blocks beyond it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace toolgate {

template <typename Key, typename Value, typename Hash = std::hash<Key>>
class BoundedTtlCache {
 public:
  // capacity: the most entries kept (at least 1).
  explicit BoundedTtlCache(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}
  BoundedTtlCache(const BoundedTtlCache&) = delete;
  BoundedTtlCache& operator=(const BoundedTtlCache&) = delete;

  // The value when present and now < its expiry (it becomes the most recently used), else
  // nullopt; an expired entry is dropped.
  std::optional<Value> Get(const Key& key, int64_t now) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return std::nullopt;
    if (now >= it->second->expires_at) {
      order_.erase(it->second);
      index_.erase(it);
      return std::nullopt;
    }
    order_.splice(order_.begin(), order_, it->second);
    return it->second->value;
  }

  // The current invalidation generation; take it before asking the owner for a value.
  uint64_t generation() const {
    std::lock_guard<std::mutex> lock(mu_);
    return generation_;
  }

  // Stores value until expires_at, evicting the least recently used entry when full. Returns
  // false (and stores nothing) when an invalidation happened after generation_at_load.
  bool Put(const Key& key, Value value, int64_t expires_at, uint64_t generation_at_load) {
    std::lock_guard<std::mutex> lock(mu_);
    if (generation_at_load != generation_) return false;
    auto it = index_.find(key);
    if (it != index_.end()) {
      it->second->value = std::move(value);
      it->second->expires_at = expires_at;
      order_.splice(order_.begin(), order_, it->second);
      return true;
    }
    if (index_.size() >= capacity_) {
      index_.erase(order_.back().key);
      order_.pop_back();
    }
    order_.push_front(Entry{key, std::move(value), expires_at});
    index_.emplace(key, order_.begin());
    return true;
  }

  // Drops key's entry, if any, and makes every load begun before this call ineffective.
  void Erase(const Key& key) {
    std::lock_guard<std::mutex> lock(mu_);
    ++generation_;
    auto it = index_.find(key);
    if (it == index_.end()) return;
    order_.erase(it->second);
    index_.erase(it);
  }

  // Drops every entry for which pred(key, value) is true (a scan: for rare events), and makes
  // every load begun before this call ineffective.
  void EraseIf(const std::function<bool(const Key&, const Value&)>& pred) {
    std::lock_guard<std::mutex> lock(mu_);
    ++generation_;
    for (auto it = order_.begin(); it != order_.end();) {
      if (pred(it->key, it->value)) {
        index_.erase(it->key);
        it = order_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // Drops everything, and makes every load begun before this call ineffective.
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    ++generation_;
    index_.clear();
    order_.clear();
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return index_.size();
  }
  size_t capacity() const { return capacity_; }

 private:
  struct Entry {
    Key key;
    Value value;
    int64_t expires_at;
  };
  using Order = std::list<Entry>;  // most recently used first

  const size_t capacity_;
  mutable std::mutex mu_;
  Order order_;                                                    // guarded by mu_
  std::unordered_map<Key, typename Order::iterator, Hash> index_;  // guarded by mu_
  uint64_t generation_ = 0;                                        // guarded by mu_
};

}  // namespace toolgate
