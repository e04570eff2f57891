import Synchronization

/// A registration for the changes a level reports
/// (``CacheLevel/subscribe(_:)``). The listener is called until the
/// subscription is cancelled, explicitly or by releasing it: keep it for as
/// long as you want to hear.
public final class CacheSubscription: Sendable {
    private let onCancel: Mutex<(@Sendable () -> Void)?>
    /// Whether the level reports changes at all (`false` for ``none``): a
    /// stack over a level that reports nothing keeps nothing coherent.
    public let reportsChanges: Bool

    /// A subscription that runs `onCancel` once, when cancelled or released.
    public convenience init(onCancel: @escaping @Sendable () -> Void) {
        self.init(reportsChanges: true, onCancel: onCancel)
    }

    private init(reportsChanges: Bool, onCancel: @escaping @Sendable () -> Void) {
        self.reportsChanges = reportsChanges
        self.onCancel = Mutex(onCancel)
    }

    /// Several subscriptions as one.
    public convenience init(_ subscriptions: [CacheSubscription]) {
        self.init(reportsChanges: subscriptions.contains { $0.reportsChanges }) {
            for subscription in subscriptions { subscription.cancel() }
        }
    }

    /// A subscription to a level that reports nothing.
    public static var none: CacheSubscription { CacheSubscription(reportsChanges: false, onCancel: {}) }

    /// Stops the calls to the listener (a call under way finishes).
    public func cancel() {
        onCancel.withLock { $0.take() }?()
    }

    deinit { cancel() }
}
