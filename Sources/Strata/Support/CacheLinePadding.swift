/// 64 bytes of nothing, declared between stored properties that different
/// threads write, so that they do not share a cache line (a write to one
/// would evict the other from every other core's cache).
@usableFromInline
struct CacheLinePadding: Sendable {
    @usableFromInline let bytes: (Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64) = (0, 0, 0, 0, 0, 0, 0, 0)
    @inlinable init() {}
}
