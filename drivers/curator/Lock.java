/* Apache Curator's InterProcessMutex as a lockstep driver (docs/drivers.md).
 *
 * One line in, one line out, on stdin and stdout: "acquire" is answered
 * "ok", "busy" or "error <text>"; "release" "ok", "not-owner" or
 * "error <text>". The lock is the library's own: a protected ephemeral
 * sequential node "_c_<uuid>-lock-" under the lock's path, a watch on the
 * node before ours, reentrant for the thread that holds it (a count),
 * no fencing token. The session's timeout is the run's lease, as for the
 * ZooKeeper stages. */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;

public class Lock {
    static int setting(String name) {
        return Integer.parseInt(System.getenv("LOCKSTEP_" + name));
    }

    static String oneLine(Exception e) {
        return "error " + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' ');
    }

    static String call(InterProcessMutex mutex, String cmd, int waitMs) {
        try {
            if (cmd.equals("acquire"))
                return mutex.acquire(waitMs, TimeUnit.MILLISECONDS) ? "ok" : "busy";
            if (cmd.equals("release")) {
                mutex.release();
                return "ok";
            }
            return "error unknown command " + cmd;
        } catch (IllegalMonitorStateException e) {
            return "not-owner"; /* this thread holds no lock: nothing deleted */
        } catch (Exception e) {
            return oneLine(e);
        }
    }

    /* The nodes we create admit only the id we authenticated as. */
    static class CreatorOnly implements ACLProvider {
        public java.util.List<ACL> getDefaultAcl() {
            return ZooDefs.Ids.CREATOR_ALL_ACL;
        }

        public java.util.List<ACL> getAclForPath(String path) {
            return ZooDefs.Ids.CREATOR_ALL_ACL;
        }
    }

    public static void main(String[] args) throws Exception {
        String host = System.getenv("LOCKSTEP_HOST");
        StringBuilder hosts = new StringBuilder();
        for (int i = 0; i < setting("NODES"); i++)
            hosts.append(i > 0 ? "," : "").append(host).append(':').append(setting("PORT") + i);
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
            .connectString(hosts.toString())
            .sessionTimeoutMs(setting("LEASE_MS"))
            .connectionTimeoutMs(setting("TIMEOUT_MS"))
            .retryPolicy(new RetryNTimes(3, setting("RETRY_MS")));
        /* The ensemble lets in only its run's digest id. */
        String password = System.getenv("LOCKSTEP_PASSWORD");
        if (password != null)
            builder.authorization("digest", ("lockstep:" + password).getBytes())
                   .aclProvider(new CreatorOnly());
        CuratorFramework client = builder.build();
        client.start();
        client.blockUntilConnected(15, TimeUnit.SECONDS);
        /* A first acquire loads and links most of Curator's classes, which
         * takes a JVM seconds: done here, on a lock of our own, before
         * "ready", it does not eat into the scenario's wait budgets. */
        InterProcessMutex warm = new InterProcessMutex(client, "/lockstep-warmup/" + java.util.UUID.randomUUID());
        warm.acquire();
        warm.release();
        /* The ZooKeeper stages' root: the simulator's observer watches it. */
        InterProcessMutex mutex = new InterProcessMutex(client, "/lockstep/" + System.getenv("LOCKSTEP_LOCK"));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        System.out.println("ready");
        System.out.flush();
        for (String line; (line = in.readLine()) != null; ) {
            System.out.println(call(mutex, line.trim(), setting("WAIT_MS")));
            System.out.flush();
        }
        client.close(); /* the session ends: its nodes go */
    }
}
