import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// Deadlines, clocks and clears on a real 3-master Redis Cluster on loopback.
@Suite(.serialized) struct RedisClusterClockTests {
    /// `redis-cli -p <node's port> arguments…`.
    @discardableResult
    func cli(_ cluster: RedisCluster, _ node: Int, _ arguments: String...) async throws -> String {
        try await RedisCluster.cli(["-p", "\(cluster.nodes[node].port)"] + arguments)
    }

    /// The index in `cluster.nodes` of the master serving `name`'s slot, per `client`'s map.
    func owner(of name: String, _ client: RedisClient, _ cluster: RedisCluster) async throws -> Int {
        let address = try await #require(client.cluster).address(ofSlot: RedisClusterSlot.of(Array(name.utf8)))
        return try #require(cluster.addresses.firstIndex(of: address))
    }

    /// The master serving a set's key is stopped with the set in flight
    /// until past its deadline: the set carries the deadline on that
    /// master's clock (`PXAT`), so nothing is stored (with `PX` the value
    /// lived four seconds more).
    @Test func aSetAStoppedMasterRunsAfterItsDeadlineStoresNothing() async throws {
        let cluster = try await RedisCluster()
        // The stop must not make the others mark the master failed meanwhile.
        for node in 0..<3 { try await cli(cluster, node, "CONFIG", "SET", "cluster-node-timeout", "60000") }
        let level = try RedisCacheLevel<String, String>(cluster: cluster.seedURLs, prefix: "cdl:", codec: .string,
                                                         commandTimeout: .seconds(30), invalidatesLevelsAbove: false)
        try await level.set("warm", forKey: "{t}warm", ttl: .seconds(60))  // connected; the master's clock known
        let node = try await owner(of: "cdl:{t}k", level.client, cluster)
        let deadline = SystemClock().now().advanced(by: .seconds(4))
        kill(cluster.nodes[node].process.processIdentifier, SIGSTOP)
        let write = Task {
            let began = SystemClock().now()
            try await level.set("v", forKey: "{t}k", expiresAt: deadline)
            return began
        }
        #expect(await poll(timeout: .seconds(15)) { SystemClock().now() > deadline.advanced(by: .milliseconds(50)) })
        kill(cluster.nodes[node].process.processIdentifier, SIGCONT)
        #expect(try await write.value < deadline.advanced(by: .seconds(-1)), "too slow to test: the set began after its deadline")
        #expect(try await cli(cluster, node, "PTTL", "cdl:{t}k").contains("-2"), "the set stored the value past its deadline")
        await level.shutdown(); await cluster.kill()
    }
}
