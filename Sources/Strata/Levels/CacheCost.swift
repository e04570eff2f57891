import Foundation

/// The size of a value in bytes, used by ``MemoryCacheLevel``'s capacity.
public protocol CacheCost {
    /// Bytes this value occupies (payload bytes; object overhead is not counted).
    var cacheCost: Int { get }
}

extension Data: CacheCost { @inlinable public var cacheCost: Int { count } }
extension String: CacheCost { @inlinable public var cacheCost: Int { utf8.count } }
extension Substring: CacheCost { @inlinable public var cacheCost: Int { utf8.count } }
extension Array: CacheCost where Element: CacheCost {
    @inlinable public var cacheCost: Int { reduce(0) { $0 + $1.cacheCost } }
}
extension Int: CacheCost { @inlinable public var cacheCost: Int { MemoryLayout<Int>.size } }
extension Double: CacheCost { @inlinable public var cacheCost: Int { MemoryLayout<Double>.size } }
extension Bool: CacheCost { @inlinable public var cacheCost: Int { 1 } }
