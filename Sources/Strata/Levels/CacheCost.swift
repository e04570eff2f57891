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
extension Bool: CacheCost { @inlinable public var cacheCost: Int { 1 } }

/// Fixed-size numbers cost their size in bytes.
public protocol FixedSizeCacheCost: CacheCost {}

extension FixedSizeCacheCost {
    @inlinable public var cacheCost: Int { MemoryLayout<Self>.size }
}

// Every standard integer and floating-point type.
extension Int: FixedSizeCacheCost {}
extension Int8: FixedSizeCacheCost {}
extension Int16: FixedSizeCacheCost {}
extension Int32: FixedSizeCacheCost {}
extension Int64: FixedSizeCacheCost {}
extension UInt: FixedSizeCacheCost {}
extension UInt8: FixedSizeCacheCost {}
extension UInt16: FixedSizeCacheCost {}
extension UInt32: FixedSizeCacheCost {}
extension UInt64: FixedSizeCacheCost {}
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
extension Int128: FixedSizeCacheCost {}
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
extension UInt128: FixedSizeCacheCost {}
extension Float: FixedSizeCacheCost {}
extension Double: FixedSizeCacheCost {}
#if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
@available(macOS 11.0, iOS 14.0, tvOS 14.0, watchOS 7.0, *)
extension Float16: FixedSizeCacheCost {}
#endif
#if arch(x86_64) && !os(Windows) && !os(Android)
extension Float80: FixedSizeCacheCost {}
#endif
