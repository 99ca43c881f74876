import Foundation
import Testing
@testable import RealmDB
import TestSupport

// The seeds' Swift examples, in today's @Persisted style.

final class User: Object {
    @Persisted var name = ""
    @Persisted var age = 0
}

final class Contact: Object {
    @Persisted(primaryKey: true) var phone = ""
}

final class Location: Object {
    @Persisted var lat = 0.0
    @Persisted var lng = 0.0
    @Persisted var postalCode = ""
    @Persisted var cc = ""
    @Persisted var state = ""
    @Persisted var country = ""
}

final class Venue: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var name = ""
    @Persisted var contact: Contact?
    @Persisted var location: Location?
}

final class BulkPerson: Object {
    @Persisted var name = ""
    @Persisted var birthdate = Date(timeIntervalSince1970: 0)
}

@Suite struct SeedsExamplesTests {
    /// realm-swift-notes-ja: write a User, update it on a background queue, see it after refresh.
    @Test func userBasicsAndBackgroundUpdate() throws {
        let dir = TempDir()
        let config = fileConfig(dir, [User.self])
        let realm = try Realm(configuration: config)
        let users = realm.objects(User.self)
        let u = User()
        u.age = 1
        try realm.write { realm.add(u) }
        #expect(users.count == 1)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue(label: "background").async {
            let realm = try! Realm(configuration: config)
            let theUser = realm.objects(User.self).filter { $0.age == 1 }.first
            try! realm.write { theUser!.age = 3 }
            done.signal()
        }
        done.wait()
        #expect(u.age == 1)  // this Realm still reads its version
        realm.refresh()
        #expect(u.age == 3)
    }

    /// realm-cocoa-docs-ja (JSON import): venues created or updated from dictionaries; keys that are not
    /// properties are ignored; nested dictionaries become linked objects; primary keys deduplicate.
    @Test func venuesFromJSON() throws {
        let json = """
        {"response": {"venues": [
          {"id": "4c82f252d92ea09323185072", "name": "Golden Gate Park", "contact": {"phone": "4152522590"},
           "location": {"lat": 37.773835608329, "lng": -122.41962432861, "postalCode": "94103", "cc": "US",
                        "state": "California", "country": "United States"}, "stats": {"checkins": 12}},
          {"id": "5", "name": "Ferry Building", "contact": {"phone": "4152522590"},
           "location": {"lat": 37.79, "lng": -122.39, "postalCode": "94111", "cc": "US", "state": "California",
                        "country": "United States"}}
        ]}}
        """
        let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
        let venues = (parsed["response"] as! [String: Any])["venues"] as! [[String: Any]]
        let realm = try memoryRealm([Venue.self])
        func importAll() throws {
            try realm.write {
                for venue in venues { realm.create(Venue.self, value: venue, update: .modified) }
            }
        }
        try importAll()
        try importAll()  // again: updated in place, nothing duplicated
        #expect(realm.objects(Venue.self).count == 2)
        #expect(realm.objects(Contact.self).count == 1)
        let park = try #require(realm.object(ofType: Venue.self, forPrimaryKey: "4c82f252d92ea09323185072"))
        #expect(park.name == "Golden Gate Park")
        #expect(park.contact?.phone == "4152522590")
        #expect(park.location?.state == "California")
        #expect(abs((park.location?.lat ?? 0) - 37.773835608329) < 1e-12)
    }

    /// realm-cocoa-docs-ja: a background queue adds objects in batches of a thousand while the main thread
    /// reads. A million objects with REALM_BIG=1; a hundred thousand otherwise.
    @Test func backgroundBulkInsertInBatches() throws {
        let batches = ProcessInfo.processInfo.environment["REALM_BIG"] == "1" ? 1000 : 100
        let dir = TempDir()
        let config = fileConfig(dir, [BulkPerson.self])
        let main = try Realm(configuration: config)
        let people = main.objects(BulkPerson.self)
        #expect(people.isEmpty)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue(label: "background").async {
            let realm = try! Realm(configuration: config)
            for idx1 in 0..<batches {
                try! realm.write {
                    for idx2 in 0..<1000 {
                        realm.create(BulkPerson.self, value: ["name": "\(idx1)", "birthdate": Date(timeIntervalSince1970: Double(idx2))])
                    }
                }
            }
            done.signal()
        }
        // The main thread keeps reading consistent versions meanwhile: always whole batches.
        var seen = 0
        while done.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
            main.refresh()
            let n = people.count
            #expect(n % 1000 == 0)
            #expect(n >= seen)
            seen = n
        }
        main.refresh()
        #expect(people.count == batches * 1000)
        #expect(people.last?.name == "\(batches - 1)")
    }

    /// realm-cocoa-docs-ja: copying an object to another Realm with create.
    @Test func copyBetweenRealms() throws {
        let a = try memoryRealm([Venue.self], "seedsCopyA")
        let b = try memoryRealm([Venue.self], "seedsCopyB")
        let v = try a.write { a.create(Venue.self, value: ["id": "1", "name": "Park", "contact": ["phone": "1"]]) }
        let copy = try b.write { b.create(Venue.self, value: v) }
        #expect(copy.name == "Park" && copy.contact?.phone == "1" && copy.realm == b)
    }

    /// realm-cocoa-docs-ja: in-memory Realms keep their data while a Realm instance holds them.
    @Test func inMemoryRealmLivesWhileReferenced() throws {
        let id = "seeds-mem-\(UUID())"
        let config = Realm.Configuration(inMemoryIdentifier: id, objectTypes: [User.self])
        var realm: Realm? = try Realm(configuration: config)
        try realm!.write { realm!.create(User.self, value: ["name": "a"]) }
        let second = try Realm(configuration: config)
        #expect(second.objects(User.self).count == 1)
        realm = nil
        _ = realm
    }
}
