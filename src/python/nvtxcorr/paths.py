"""Where the launcher's parts are, relative to its directory (bin/ of the build tree, of an
install prefix and of the wheel's package; src/cli of a source tree, whose build/ is beside
it): the library, nvtxcorr-tool and the shipped label tables."""
import os


def first(*candidates):
    return next((c for c in candidates if os.path.exists(c)), None)


class Paths:
    def __init__(self, here):
        self.here = here
        up, up2 = os.path.join(here, ".."), os.path.join(here, "..", "..")
        self.library = os.environ.get("NVTXCORR_LIBRARY") or first(
            os.path.join(up, "lib", "libnvtxcorr.so")) or first(
            *sorted(os.path.join(up, "lib", d, "libnvtxcorr.so")
                    for d in (os.listdir(os.path.join(up, "lib"))
                              if os.path.isdir(os.path.join(up, "lib")) else ())),
            os.path.join(up2, "build", "lib", "libnvtxcorr.so"))
        self.tool = first(os.path.join(up, "libexec", "nvtxcorr", "nvtxcorr-tool"),
                          os.path.join(up2, "build", "libexec", "nvtxcorr", "nvtxcorr-tool"))
        tables = first(os.path.join(up, "share", "nvtxcorr", "labels"),
                       os.path.join(up2, "build", "share", "nvtxcorr", "labels"),
                       os.path.join(up2, "docs", "labels"))
        self.tables = os.path.realpath(tables) if tables else None

    def shipped(self, name):
        """A shipped table's path for its NAME (vllm or vllm.conf); anything else as it is. A
        file of that name in the current directory, or a name with a slash, is a path and
        wins."""
        if "/" in name or name.startswith("-") or not name or os.path.exists(name) or \
                not self.tables:
            return name
        for candidate in (os.path.join(self.tables, name + ".conf"),
                          os.path.join(self.tables, name)):
            if os.path.isfile(candidate):
                return candidate
        return name

    def table_names(self):
        return sorted(f[:-5] for f in os.listdir(self.tables) if f.endswith(".conf"))
