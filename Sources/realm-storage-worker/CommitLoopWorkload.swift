import RealmStorage

/// The deterministic workload of `commit-loop`: transaction `i` (from 0) changes the database in a way that
/// is a pure function of `i`, so the state after transactions `0...k` is a pure function of `k`. The crash
/// tests (which `@testable import` this module) use the same functions to compute what must be in the file.
///
/// Transaction `i`:
/// 1. (only `i == 0`) creates the schema, the `bucketCount` buckets and the progress object;
/// 2. creates `Counter` n = i, with payload, blob and label of revision i, appends it to the items of bucket
///    `i % bucketCount` and makes it that bucket's head; appends tag `t<i>` to that bucket (keeping the last
///    `tagLimit`);
/// 3. deletes every counter whose `deletedAt` is i (which nulls bucket heads and removes list entries);
/// 4. updates counter `updateTarget(i)` (payload, blob, label to revision i) if it is still live;
/// 5. sets `Progress.last` to i.
///
/// A counter also carries the newer structures, of its revision: a set of strings (`marks`), a dictionary of
/// mixed values with a typed link to its bucket (`attrs`), and an embedded `Place`, replaced at each update; a
/// bucket's set `members` holds its live counters, as its `items` list does.
enum CommitLoop {
    static let bucketCount = 8
    static let tagLimit = 12

    static let schema: [ClassSchema] = [
        ClassSchema(name: "Counter", properties: [
            PropertySchema(name: "n", type: .int, isPrimaryKey: true),
            PropertySchema(name: "payload", type: .string),
            PropertySchema(name: "blob", type: .data),
            PropertySchema(name: "label", type: .string, isIndexed: true),
            .linkingObjects("buckets", from: "Bucket", property: "items"),
            PropertySchema(name: "marks", type: .string, isSet: true),
            PropertySchema(name: "attrs", type: .mixed, isOptional: true, isDictionary: true),
            .link("place", to: "Place"),
        ]),
        ClassSchema(name: "Bucket", properties: [
            PropertySchema(name: "id", type: .int, isPrimaryKey: true),
            .list("items", of: "Counter"),
            .link("head", to: "Counter"),
            PropertySchema(name: "tags", type: .string, isList: true),
            .set("members", of: "Counter"),
        ]),
        ClassSchema(name: "Place", properties: [PropertySchema(name: "street", type: .string)], isEmbedded: true),
        ClassSchema(name: "Progress", properties: [
            PropertySchema(name: "id", type: .int, isPrimaryKey: true),
            PropertySchema(name: "last", type: .int),
        ]),
    ]

    // MARK: The schedule (pure functions)

    /// The transaction that deletes counter `n`, or nil if it is never deleted: most die young, a few live
    /// longer, every twelfth lives forever.
    static func deletedAt(_ n: Int) -> Int? {
        if n % 4 != 0 { return n + 40 }
        if n % 12 != 0 { return n + 200 }
        return nil
    }

    /// The counters transaction `i` deletes (the inverse of `deletedAt`).
    static func deletions(at i: Int) -> [Int] {
        var out: [Int] = []
        let young = i - 200
        if young >= 0, young % 4 == 0, young % 12 != 0 { out.append(young) }
        let old = i - 40
        if old >= 0, old % 4 != 0 { out.append(old) }
        return out
    }

    /// Whether counter `n` exists after transaction `k`.
    static func isLive(_ n: Int, after k: Int) -> Bool {
        n >= 0 && n <= k && (deletedAt(n).map { $0 > k } ?? true)
    }

    /// The earlier counter transaction `i` tries to update (one of the 30 before it).
    static func updateTarget(_ i: Int) -> Int? {
        guard i >= 1 else { return nil }
        return i - 1 - (i &* 13) % min(i, 30)
    }

    /// The transaction that last wrote counter `n`'s values, as seen after transaction `k` (n must be live).
    static func revision(of n: Int, after k: Int) -> Int {
        var rev = n
        var i = n + 1
        while i <= min(k, n + 30) {
            if updateTarget(i) == n, isLive(n, after: i) { rev = i }
            i += 1
        }
        return rev
    }

    // MARK: Values

    static func mix(_ a: Int, _ b: Int) -> UInt64 {
        var z = (UInt64(bitPattern: Int64(a)) &* 0x9E37_79B9_7F4A_7C15) ^ (UInt64(bitPattern: Int64(b)) &* 0xC2B2_AE3D_27D4_EB4F)
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Mostly short strings; about one in seven is longer than the 1024-byte inline limit (a blob node).
    static func payload(_ n: Int, rev: Int) -> String {
        let h = mix(n, rev)
        let length = h % 7 == 0 ? 1100 + Int((h >> 8) % 2500) : Int((h >> 8) % 300)
        let unit = "n\(n)r\(rev)|"
        var s = ""
        s.reserveCapacity(length + unit.utf8.count)
        while s.utf8.count < length { s += unit }
        return String(decoding: s.utf8.prefix(length), as: UTF8.self)
    }

    /// Mostly short byte strings; about one in five is a blob.
    static func blob(_ n: Int, rev: Int) -> [UInt8] {
        let h = mix(rev, n)
        let length = h % 5 == 0 ? 1025 + Int((h >> 8) % 3000) : Int((h >> 8) % 64)
        var out = [UInt8](repeating: 0, count: length)
        var x = h
        for j in 0..<length {
            x = x &* 6364136223846793005 &+ 1442695040888963407
            out[j] = UInt8(truncatingIfNeeded: x >> 56)
        }
        return out
    }

    static func label(rev: Int) -> String { "L\(rev % 97)" }
    /// Counter `n`'s set `marks` at revision `rev`.
    static func marks(_ n: Int, rev: Int) -> [String] { ["n\(n % 5)", "r\(rev)", "r\(rev % 3)x"] }
    /// Counter `n`'s embedded place at revision `rev`.
    static func street(_ n: Int, rev: Int) -> String { "n\(n) r\(rev)" }
    /// Counter `n`'s dictionary `attrs` at revision `rev`; `bucket` stands for the typed link to its bucket.
    static func attrs(_ n: Int, rev: Int, bucket: Value) -> ValueDictionary {
        ValueDictionary([("rev", .int(Int64(rev))), ("bucket", bucket), ("nested", .list([.int(Int64(n)), .string("r\(rev)")]))])
    }
    static func tag(_ i: Int) -> String { "t\(i)" }

    // MARK: Expected state after transaction k

    /// Live counter numbers after transaction `k`, ascending.
    static func liveCounters(after k: Int) -> [Int] {
        k < 0 ? [] : (0...k).filter { isLive($0, after: k) }
    }

    static func bucketItems(_ b: Int, after k: Int) -> [Int] {
        k < 0 ? [] : stride(from: b, through: k, by: bucketCount).filter { isLive($0, after: k) }
    }

    /// The newest counter of the bucket if it is still live, otherwise nil (its deletion nulled the link).
    static func bucketHead(_ b: Int, after k: Int) -> Int? {
        guard k >= b else { return nil }
        let newest = k - (k - b) % bucketCount
        return isLive(newest, after: k) ? newest : nil
    }

    static func bucketTags(_ b: Int, after k: Int) -> [String] {
        guard k >= b else { return [] }
        let all = Array(stride(from: b, through: k, by: bucketCount))
        return all.suffix(tagLimit).map(tag)
    }

    // MARK: Applying a transaction

    /// The last transaction the file holds, or -1 when it holds none (no schema yet).
    static func lastTransaction(_ s: Snapshot) throws -> Int {
        guard s.classSchema("Progress") != nil else { return -1 }
        let t = try s.table("Progress")
        guard let p = try s.object(t, primaryKey: .int(0)) else { return -1 }
        guard case .int(let last) = try s.value(p, s.property(t, "last")) else { return -1 }
        return Int(last)
    }

    static func apply(_ i: Int, _ tx: WriteTransaction) throws {
        if i == 0 {
            try tx.createClasses(schema)
            for b in 0..<bucketCount { try tx.createObject("Bucket", ["id": .int(Int64(b))]) }
            try tx.createObject("Progress", ["id": .int(0), "last": .int(-1)])
        }
        let counters = try tx.table("Counter")
        let buckets = try tx.table("Bucket")
        let items = try tx.property(buckets, "items")
        let head = try tx.property(buckets, "head")
        let tags = try tx.property(buckets, "tags")

        guard let bucket = try tx.object(buckets, primaryKey: .int(Int64(i % bucketCount))) else {
            throw WorkerError("bucket \(i % bucketCount) is missing in transaction \(i)")
        }
        guard let bucketClass = tx.classID(named: "Bucket") else { throw WorkerError("no class Bucket") }
        let key = try tx.createObject(counters, [
            "n": .int(Int64(i)), "payload": .string(payload(i, rev: i)), "blob": .data(blob(i, rev: i)),
            "label": .string(label(rev: i)),
        ], lists: ["marks": marks(i, rev: i).map { .string($0) }],
           dictionaries: ["attrs": attrs(i, rev: i, bucket: .typedLink(classID: bucketClass, key: bucket))])
        let place = try tx.property(counters, "place")
        try tx.createEmbeddedObject(in: key, place, ["street": .string(street(i, rev: i))])
        try tx.listAppend(bucket, items, .link(key))
        try tx.setInsert(bucket, tx.property(buckets, "members"), .link(key))
        try tx.set(bucket, head, .link(key))
        try tx.listAppend(bucket, tags, .string(tag(i)))
        if try tx.list(bucket, tags).count > tagLimit { try tx.listRemove(bucket, tags, at: 0) }

        for n in deletions(at: i) {
            guard let k = try tx.object(counters, primaryKey: .int(Int64(n))) else {
                throw WorkerError("counter \(n), due for deletion in transaction \(i), is missing")
            }
            try tx.delete(counters, k)
        }
        if let u = updateTarget(i), isLive(u, after: i) {
            guard let k = try tx.object(counters, primaryKey: .int(Int64(u))) else {
                throw WorkerError("counter \(u), due for update in transaction \(i), is missing")
            }
            try tx.set(k, tx.property(counters, "payload"), .string(payload(u, rev: i)))
            try tx.set(k, tx.property(counters, "blob"), .data(blob(u, rev: i)))
            try tx.set(k, tx.property(counters, "label"), .string(label(rev: i)))
            try tx.setAssign(k, tx.property(counters, "marks"), marks(u, rev: i).map { .string($0) })
            try tx.dictionarySet(k, tx.property(counters, "attrs"), key: "rev", .int(Int64(i)))
            try tx.dictionarySet(k, tx.property(counters, "attrs"), key: "nested", .list([.int(Int64(u)), .string("r\(i)")]))
            try tx.createEmbeddedObject(in: k, place, ["street": .string(street(u, rev: i))])
        }
        let progress = try tx.table("Progress")
        guard let p = try tx.object(progress, primaryKey: .int(0)) else { throw WorkerError("progress object missing") }
        try tx.set(p, tx.property(progress, "last"), .int(Int64(i)))
    }

    /// `commit-loop PATH`: commits transactions from where the file left off, forever.
    static func run(path: String) throws -> Never {
        let db = try Database.open(path: path, options: workerOptions)
        var i = try db.read { try lastTransaction($0) } + 1
        emit("start \(i)")
        while true {
            try db.write { tx in
                // Another process could have advanced the file; the schedule must stay in step with it.
                let last = try lastTransaction(tx)
                guard last == i - 1 else { throw WorkerError("file holds transaction \(last), expected \(i - 1)") }
                try apply(i, tx)
            }
            emit("committed \(i)")
            i += 1
        }
    }
}

struct WorkerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
