import Synchronization

/// A named on/off switch behind a level's condition (`toggle NAME`, keys 1–9).
public final class Toggle: Sendable {
    public let name: String
    private let state = Atomic<Bool>(true)

    public init(name: String, isOn: Bool = true) {
        self.name = name
        state.store(isOn, ordering: .relaxed)
    }

    public var isOn: Bool { state.load(ordering: .relaxed) }

    /// Flips the switch; returns the new state.
    @discardableResult
    public func flip() -> Bool { !state.logicalXor(true, ordering: .relaxed).oldValue }

    public func set(_ on: Bool) { state.store(on, ordering: .relaxed) }
}
