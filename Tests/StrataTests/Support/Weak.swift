/// A weak reference to an object, to see whether something let it go.
final class Weak: @unchecked Sendable {
    // Safe: `object` is a weak reference written once, in `init`, before
    // the box is shared, and only read afterwards (weak loads are atomic).
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}
