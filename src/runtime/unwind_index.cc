#include "runtime/unwind_index.h"

#include "runtime/debug_frame_file.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <atomic>

namespace tally::runtime {
namespace {

constinit pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;
constinit std::atomic<UnwindIndex*> current{nullptr};
constinit std::atomic<int> readers{0};
constinit std::atomic<bool> unknown_code{false};

// Indexes replaced while a handler was still reading: unmapped at a later build.
constexpr int kMaxRetired = 16;
constinit UnwindIndex* retired[kMaxRetired] = {};

constexpr size_t kHeaderBytes = offsetof(UnwindIndex, rows);

// The index being built: rows appended to a mapping that grows (mremap) as needed.
struct Builder {
  UnwindIndex* index = nullptr;
  size_t capacity = 0;  // rows
  size_t visited = 0;   // images dl_iterate_phdr gave (the first is the executable)
  bool out_of_memory = false;

  bool reserve(size_t rows) {
    if (rows <= capacity) return true;
    size_t wanted = capacity == 0 ? 16384 : capacity * 2;
    while (wanted < rows) wanted *= 2;
    size_t bytes = kHeaderBytes + wanted * sizeof(UnwindRow);
    void* memory = index == nullptr
                       ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                       : mremap(index, index->mapped_bytes, bytes, MREMAP_MAYMOVE);
    if (memory == MAP_FAILED) {
      out_of_memory = true;
      return false;
    }
    index = static_cast<UnwindIndex*>(memory);
    index->mapped_bytes = bytes;
    capacity = wanted;
    return true;
  }
  static void append(void* context, const UnwindRow& row) {
    auto* builder = static_cast<Builder*>(context);
    if (!builder->reserve(builder->index->count + 1)) return;
    builder->index->rows[builder->index->count++] = row;
  }
};

// The .eh_frame of an image from its .eh_frame_hdr: the encoded pointer to it (the usual
// encodings only: pc-relative or absolute, 4 or 8 bytes).
bool eh_frame_from_header(uintptr_t header, uintptr_t* eh_frame) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(header);
  if (bytes[0] != 1) return false;
  uint8_t encoding = bytes[1];
  uintptr_t field = header + 4;
  uint64_t value = 0;
  switch (encoding & 0x0f) {
    case 0x03: { uint32_t v; memcpy(&v, bytes + 4, 4); value = v; break; }
    case 0x0b: { int32_t v; memcpy(&v, bytes + 4, 4); value = static_cast<uint64_t>(static_cast<int64_t>(v)); break; }
    case 0x00:
    case 0x04:
    case 0x0c: memcpy(&value, bytes + 4, 8); break;
    default: return false;
  }
  if ((encoding & 0x70) == 0x10) value += field;
  else if ((encoding & 0x70) != 0) return false;
  *eh_frame = static_cast<uintptr_t>(value);
  return true;
}

// Passes on the rows of .debug_frame's FDEs whose start .eh_frame does not cover (in an
// image with both, as a -g build's crt files and its own code, the FDEs are the same).
struct UncoveredFdes {
  Builder* builder;
  size_t eh_first, eh_count;  // the image's sorted .eh_frame rows
  bool in_fde = false, skip = false;

  static void append(void* context, const UnwindRow& row) {
    auto* self = static_cast<UncoveredFdes*>(context);
    if (!self->in_fde) {  // an FDE's first row: at its start
      self->in_fde = true;
      self->skip = find_unwind_row(self->builder->index->rows + self->eh_first, self->eh_count, row.address) != nullptr;
    }
    if (row.kind == RuleKind::none) self->in_fde = false;  // its end
    if (!self->skip) Builder::append(self->builder, row);
  }
};

void add_debug_frame(dl_phdr_info* info, Builder* builder, size_t eh_first) {
  // The executable's name is empty; the vDSO's is not a path.
  const char* path = info->dlpi_name;
  if (path == nullptr || path[0] == 0) {
    if (builder->visited != 1) return;
    path = "/proc/self/exe";
  } else if (path[0] != '/') {
    return;
  }
  MappedDebugFrame mapped;
  if (!map_debug_frame(path, &mapped)) return;
  // The image's .eh_frame rows sorted, so that .debug_frame's FDEs can be checked against
  // them (only here: sorting every image twice doubles the build's time).
  builder->index->count = eh_first + sort_unwind_rows(builder->index->rows + eh_first, builder->index->count - eh_first);
  UncoveredFdes filter{builder, eh_first, builder->index->count - eh_first};
  size_t before = builder->index->count;
  CompileResult result = compile_debug_frame({mapped.bytes, mapped.size, info->dlpi_addr}, UncoveredFdes::append, &filter);
  unmap_debug_frame(&mapped);
  if (builder->index->count != before) ++builder->index->debug_frame_images;
  if (!result.ok) ++builder->index->broken_images;
}

int add_image(dl_phdr_info* info, size_t, void* context) {
  auto* builder = static_cast<Builder*>(context);
  ++builder->visited;
  if (builder->index != nullptr && builder->index->images == 0) {
    builder->index->loads = info->dlpi_adds;
    builder->index->unloads = info->dlpi_subs;
  }
  uintptr_t header = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME) header = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
  }
  size_t first = builder->index->count;
  uintptr_t eh_frame = 0;
  if (header == 0 || !eh_frame_from_header(header, &eh_frame)) {
    add_debug_frame(info, builder, first);
    if (builder->index->count != first) ++builder->index->images;
    return 0;
  }
  // The section's size is not recorded in memory: it ends at its terminator, at the latest
  // where its loadable segment does.
  size_t size = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD) continue;
    uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    if (eh_frame >= start && eh_frame < start + segment.p_memsz) size = start + segment.p_memsz - eh_frame;
  }
  if (size == 0) return 0;
  EhFrameSection section{reinterpret_cast<const uint8_t*>(eh_frame), size, eh_frame};
  CompileResult result = compile_eh_frame(section, Builder::append, builder);
  add_debug_frame(info, builder, first);
  ++builder->index->images;
  if (!result.ok) ++builder->index->broken_images;
  return 0;
}

void free_retired() {
  if (readers.load(std::memory_order_seq_cst) != 0) return;
  for (auto& old : retired) {
    if (old != nullptr) munmap(old, old->mapped_bytes);
    old = nullptr;
  }
}

void retire(UnwindIndex* old) {
  // A handler that read `current` before the exchange is counted in `readers`: wait a
  // little for it (handlers take microseconds), else leave the index for a later build.
  for (int spins = 0; spins < 200 && readers.load(std::memory_order_seq_cst) != 0; ++spins) {
    timespec pause{0, 50'000};
    nanosleep(&pause, nullptr);
  }
  if (readers.load(std::memory_order_seq_cst) == 0) {
    munmap(old, old->mapped_bytes);
    free_retired();
    return;
  }
  for (auto& slot : retired) {
    if (slot == nullptr) {
      slot = old;
      return;
    }
  }
  // Sixteen builds while a handler never left: keep leaking rather than unmap under it.
}

// The range of a libc function (its .dynsym entry's size), or nothing.
UnwindIndex::CodeRange find_function(const char* name) {
  void* address = dlsym(RTLD_DEFAULT, name);
  Dl_info info;
  void* entry = nullptr;
  if (address == nullptr || dladdr1(address, &info, &entry, RTLD_DL_SYMENT) == 0 || entry == nullptr) return {};
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  if (symbol->st_size == 0) return {};
  const auto start = reinterpret_cast<uintptr_t>(address);
  return {start, start + symbol->st_size};
}

struct LoadCounts {
  unsigned long long loads = 0, unloads = 0;
};

int read_counts(dl_phdr_info* info, size_t, void* context) {
  auto* counts = static_cast<LoadCounts*>(context);
  counts->loads = info->dlpi_adds;
  counts->unloads = info->dlpi_subs;
  return 1;
}

}  // namespace

bool refresh_unwind_index(bool force) {
  pthread_mutex_lock(&build_lock);
  UnwindIndex* old = current.load(std::memory_order_acquire);
  if (!force && old != nullptr) {
    LoadCounts counts;
    dl_iterate_phdr(read_counts, &counts);
    if (counts.loads == old->loads && counts.unloads == old->unloads) {
      pthread_mutex_unlock(&build_lock);
      return true;
    }
  }
  Builder builder;
  bool built = builder.reserve(1);
  if (built) {
    builder.index->count = 0;
    builder.index->images = 0;
    // dl_iterate_phdr holds the loader's lock: no image is unmapped while it is read.
    dl_iterate_phdr(add_image, &builder);
    built = !builder.out_of_memory;
  }
  if (!built) {
    if (builder.index != nullptr) munmap(builder.index, builder.index->mapped_bytes);
    pthread_mutex_unlock(&build_lock);
    return false;
  }
  builder.index->count = sort_unwind_rows(builder.index->rows, builder.index->count);
  builder.index->context_switches[0] = find_function("swapcontext");
  builder.index->context_switches[1] = find_function("setcontext");
  unknown_code.store(false, std::memory_order_relaxed);
  UnwindIndex* replaced = current.exchange(builder.index, std::memory_order_seq_cst);
  if (replaced != nullptr) retire(replaced);
  pthread_mutex_unlock(&build_lock);
  return true;
}

void lock_index_for_fork() { pthread_mutex_lock(&build_lock); }
void unlock_index_after_fork_in_parent() { pthread_mutex_unlock(&build_lock); }
void reset_index_after_fork_in_child() {
  build_lock = PTHREAD_MUTEX_INITIALIZER;
  // Handlers of the parent's other threads were counted; those threads are gone.
  readers.store(0, std::memory_order_relaxed);
}
bool have_unwind_index() { return current.load(std::memory_order_acquire) != nullptr; }

const UnwindIndex* enter_index_reader() {
  readers.fetch_add(1, std::memory_order_seq_cst);
  return current.load(std::memory_order_seq_cst);
}

void leave_index_reader() { readers.fetch_sub(1, std::memory_order_seq_cst); }

const UnwindRow* find_unwind_row(const UnwindIndex& index, uint64_t address) {
  return find_unwind_row(index.rows, index.count, address);
}

bool note_unknown_code() { return !unknown_code.exchange(true, std::memory_order_relaxed); }
bool unknown_code_noted() { return unknown_code.load(std::memory_order_relaxed); }

}  // namespace tally::runtime
