import NIOCore
import Synchronization

/// A reply destination that can be completed once (by the reply, a timeout,
/// a closed connection or a cancelled caller, whichever comes first).
final class ReplySlot: Sendable {
    let promise: EventLoopPromise<RESPValue>
    private let done = Atomic<Bool>(false)

    init(promise: EventLoopPromise<RESPValue>) { self.promise = promise }

    func succeed(_ value: RESPValue) {
        if !done.exchange(true, ordering: .acquiringAndReleasing) { promise.succeed(value) }
    }

    func fail(_ error: any Error) {
        if !done.exchange(true, ordering: .acquiringAndReleasing) { promise.fail(error) }
    }
}
