// swift-tools-version:6.2
import PackageDescription

/// Every Strata target is Swift 6 language mode with strict concurrency, and
/// async functions run on the caller's executor (no executor hop per request).
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
    .enableUpcomingFeature("InferIsolatedConformances"),
]

let package = Package(
    name: "Strata",
    // Mutex and Atomic (Synchronization) need macOS 15.
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        .library(name: "StrataRedis", targets: ["StrataRedis"]),
        .library(name: "StrataMetrics", targets: ["StrataMetrics"]),
        .library(name: "StrataTracing", targets: ["StrataTracing"]),
        .library(name: "StrataLifecycle", targets: ["StrataLifecycle"]),
        .library(name: "StrataCombine", targets: ["StrataCombine"]),
        .executable(name: "strata", targets: ["strata"]),
        .executable(name: "strata-bench", targets: ["StrataBench"]),
        .executable(name: "strata-hitpath", targets: ["StrataHitPath"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        // TLS for StrataRedis only (`rediss://`); nothing else links it.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    ],
    targets: [
        /// The system calls Glibc's Swift module does not expose (`renameat2`).
        .target(name: "CStrataSystem"),
        .target(
            name: "Strata",
            dependencies: [
                "CStrataSystem",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "StrataRedis",
            dependencies: [
                "Strata",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "StrataMetrics",
            dependencies: ["Strata", .product(name: "Metrics", package: "swift-metrics")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "StrataTracing",
            dependencies: ["Strata", .product(name: "Tracing", package: "swift-distributed-tracing")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "StrataLifecycle",
            dependencies: ["Strata", "StrataRedis", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "StrataCombine",
            dependencies: ["Strata", .product(name: "OpenCombineShim", package: "OpenCombine")],
            swiftSettings: strictSettings
        ),
        .systemLibrary(name: "CNcursesw", path: "Sources/CNcursesw"),
        .target(
            name: "StrataExplorer",
            dependencies: [
                "Strata", "StrataRedis", "StrataSim", "CNcursesw",
                .product(name: "Yams", package: "Yams"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "StrataSim",
            dependencies: [
                "Strata",
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "strata",
            dependencies: [
                "Strata",
                "StrataExplorer",
                "StrataSim",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "StrataBench",
            dependencies: ["Strata", "StrataRedis", "StrataMetrics", .product(name: "Prometheus", package: "swift-prometheus")],
            path: "Sources/strata-bench",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "StrataHitPath",
            dependencies: ["Strata"],
            path: "Sources/strata-hitpath",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "StrataDiskWorker",
            dependencies: ["Strata"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "StrataRedisWorker",
            dependencies: ["Strata", "StrataRedis", "StrataTestSupport"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "StrataTestSupport",
            dependencies: ["Strata"],
            path: "Tests/StrataTestSupport",
            exclude: ["Fixtures"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataTests",
            dependencies: ["Strata", "StrataDiskWorker", "StrataTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataExplorerTests",
            dependencies: ["StrataExplorer", "strata", "StrataTestSupport"],
            exclude: ["Snapshots"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataRedisTests",
            dependencies: ["StrataRedis", "Strata", "StrataRedisWorker", "StrataTestSupport", .product(name: "NIOEmbedded", package: "swift-nio")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataMetricsTests",
            dependencies: ["StrataMetrics", "Strata", "StrataTestSupport", .product(name: "MetricsTestKit", package: "swift-metrics"),
                           .product(name: "Prometheus", package: "swift-prometheus")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataTracingTests",
            dependencies: ["StrataTracing", "Strata", "StrataTestSupport",
                           .product(name: "InMemoryTracing", package: "swift-distributed-tracing")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataLifecycleTests",
            dependencies: ["StrataLifecycle", "Strata", "StrataRedis", "StrataTestSupport",
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataCombineTests",
            dependencies: ["StrataCombine", "Strata", "StrataTestSupport", .product(name: "OpenCombineShim", package: "OpenCombine"),
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataSimTests",
            dependencies: ["StrataSim", "Strata", "strata", "StrataTestSupport"],
            exclude: ["Traces"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StrataExamplesTests",
            dependencies: ["Strata", "StrataRedis", "StrataTestSupport"],
            swiftSettings: strictSettings
        ),
    ]
)
