package backend

// hugePage is the size of a transparent huge page on x86-64 (and arm64
// with 4 KiB pages): AdviseHugePages advises whole ones.
const hugePage = 2 << 20
