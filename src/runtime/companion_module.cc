#include "runtime/companion_module.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/text.h"

namespace tally::runtime {

void* companion_symbol(const char* file_name, const char* env_override, const char* symbol,
                       char* error, size_t error_size) {
  char module[PATH_MAX];
  if (const char* chosen = getenv(env_override); chosen != nullptr && *chosen) {
    copy_text(module, sizeof module, chosen);
  } else {
    Dl_info self;
    if (dladdr(reinterpret_cast<void*>(&companion_symbol), &self) == 0 ||
        self.dli_fname == nullptr) {
      snprintf(error, error_size, "cannot find where libtally.so is");
      return nullptr;
    }
    const char* slash = strrchr(self.dli_fname, '/');
    int directory_length = slash == nullptr ? 1 : static_cast<int>(slash - self.dli_fname);
    snprintf(module, sizeof module, "%.*s/%s", directory_length,
             slash == nullptr ? "." : self.dli_fname, file_name);
  }
  void* handle = dlopen(module, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    copy_text(error, error_size, dlerror());
    return nullptr;
  }
  void* address = dlsym(handle, symbol);
  if (address == nullptr) snprintf(error, error_size, "%s has no %s", module, symbol);
  // The module stays loaded: its static objects may be referred to until exit.
  return address;
}

}  // namespace tally::runtime
