/// A level's hot paths, compiled for its concrete `Key` and `Value` where the
/// level was created and kept with it.
///
/// A generic level reached without its types (through `any CacheLevel`, or a
/// generic function in another module that the optimiser did not specialise)
/// runs its generic body, in which every hash, comparison and copy of a key or
/// value is a call through a witness table: about 17x the specialised cost of
/// a memory hit. The level's `@inlinable` initialiser builds these closures at
/// the creation site, where the types are concrete, so the generic body can
/// hand over to specialised code with one indirect call.
///
/// The closures take the level as an argument instead of capturing it, so
/// storing them in the level makes no reference cycle.
@usableFromInline
struct SpecialisedPaths<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline typealias Level = MemoryCacheLevel<Key, Value>
    @usableFromInline let value: @Sendable (Level, Key) -> Value?
    @usableFromInline let entry: @Sendable (Level, Key) -> CacheEntry<Value>?
    @usableFromInline let store: @Sendable (Level, Value, Key, CacheInstant?) throws -> Void

    @inlinable
    init(
        value: @escaping @Sendable (Level, Key) -> Value?,
        entry: @escaping @Sendable (Level, Key) -> CacheEntry<Value>?,
        store: @escaping @Sendable (Level, Value, Key, CacheInstant?) throws -> Void
    ) {
        self.value = value
        self.entry = entry
        self.store = store
    }
}

