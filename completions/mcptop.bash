# bash completion for mcptop(1)                              -*- shell-script -*-
#
# Installed as share/bash-completion/completions/mcptop. Needs nothing from
# the bash-completion package. Theme names come from `mcptop tui
# --list-themes`, view names from `mcptop tui --list-views`, server names from `mcptop end [-c FILE | URL]
# --list-servers` with the -c FILE or URL already on the command line.

# Print the -c FILE / URL arguments found in words 2..COMP_CWORD-1, one
# per line, ready to pass on to --list-servers.
_mcptop_fleet_args()
{
    local i w next
    for ((i = 2; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        next=${COMP_WORDS[i + 1]}
        case $w in
            -c | --config)
                # bash splits "--config=FILE" at '=' into three words.
                if [[ $next == = ]]; then
                    ((i++))
                    next=${COMP_WORDS[i + 1]}
                fi
                if ((i + 1 < COMP_CWORD)); then
                    printf '%s\n' -c "${next/#\~/$HOME}"
                fi
                ;;
            http://* | https://*)
                printf '%s\n' "$w"
                ;;
        esac
    done
}

# Add the lines read on stdin that start with $cur to COMPREPLY: quoted
# for the shell, or with "raw" as they are (when -o filenames quotes).
_mcptop_add_lines()
{
    local line
    while IFS= read -r line; do
        [[ -n $line && $line == "$cur"* ]] || continue
        if [[ $1 == raw ]]; then
            COMPREPLY+=("$line")
        else
            COMPREPLY+=("$(printf '%q' "$line")")
        fi
    done
}

_mcptop()
{
    local cur prev cmd i bin
    local -a fleet
    COMPREPLY=()
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    bin=${COMP_WORDS[0]/#\~/$HOME}

    # "--opt=VALUE": bash hands us "--opt" "=" "VALUE".
    if [[ $cur == = ]]; then
        cur=
    elif [[ $prev == = ]] && ((COMP_CWORD >= 2)); then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    fi

    cmd=
    if ((COMP_CWORD > 1)); then
        case ${COMP_WORDS[1]} in
            tui | check | watch | end | audit | login | logout | serve | configs | \
                tap | cancel | replay | report)
                cmd=${COMP_WORDS[1]} ;;
        esac
    fi

    case $prev in
        -c | --config | --log | --bearer-token-file | --basic-auth-file | \
            --socket | --record)
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            return
            ;;
        --taps)
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -d -- "$cur")
            return
            ;;
        --from | --to)
            # replay's and report's --from is a time, not a client.
            [[ $cmd == replay || $cmd == report || $prev == --to ]] && return
            COMPREPLY=($(compgen -W 'claude claude-code cursor vscode windsurf
                zed gemini codex opencode goose continue cline roo lmstudio
                all' -- "$cur"))
            return
            ;;
        --theme)
            if [[ -z $cmd || $cmd == tui ]]; then
                compopt -o filenames 2>/dev/null
                _mcptop_add_lines raw < <("$bin" tui --list-themes 2>/dev/null)
                mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY \
                    < <(compgen -f -X '!*.json' -- "$cur"; compgen -d -- "$cur")
                return
            fi
            ;;
        --sort)
            if [[ -z $cmd || $cmd == tui ]]; then
                COMPREPLY=($(compgen -W 'name transport health liveness age
                    streak session protocol tools rtt failure delivered http
                    history' -- "$cur"))
                return
            fi
            ;;
        --view)
            if [[ -z $cmd || $cmd == tui ]]; then
                _mcptop_add_lines raw < <("$bin" tui --list-views 2>/dev/null)
                return
            fi
            ;;
        --group)
            if [[ -z $cmd || $cmd == tui ]]; then
                COMPREPLY=($(compgen -W 'cause tag host transport none' \
                    -- "$cur"))
                return
            fi
            ;;
        --filter)
            [[ -z $cmd || $cmd == tui ]] && return
            ;;
        -s | --server)
            if [[ $cmd == end || $cmd == audit || $cmd == cancel ]]; then
                mapfile -t fleet < <(_mcptop_fleet_args)
                _mcptop_add_lines < <("$bin" end "${fleet[@]}" \
                    --list-servers 2>/dev/null)
                return
            fi
            ;;
        --timeout | --teardown | --pings | --wait | --session | --shard | \
            --listen | -l | --label-from-tags | --parallel | --record-max | --speed | \
            --name | --request | --reason | --probe-interval | --upstream)
            return
            ;;
    esac

    local opts sources='-c --config --from -v --verbose --log --shard --taps -h
                        --help'
    case $cmd in
        check)
            opts="$sources --json --timeout --pings --stats"
            ;;
        watch)
            opts="$sources --record --record-max"
            ;;
        configs)
            opts="$sources --json"
            ;;
        end)
            opts="$sources -s --server --json --teardown --session
                  --list-servers"
            ;;
        audit)
            opts="$sources -s --server --json --parallel --timeout"
            ;;
        serve)
            opts="$sources -l --listen --label-from-tags --bearer-token-file
                  --basic-auth-file --probe-urls --record --record-max"
            ;;
        login | logout)
            opts='-c --config --wait --log -h --help'
            ;;
        tap)
            opts='--name --socket --teardown --probe --probe-interval --no-socket
                  --listen --upstream --public -h --help'
            ;;
        cancel)
            opts="$sources --server --socket --request --reason --timeout
                  --json"
            ;;
        tui)
            opts="$sources --theme --no-mouse --list-themes --record
                  --record-max --filter --sort --group --view --list-views"
            ;;
        replay)
            opts='--speed --from --to --theme --no-mouse -h --help'
            ;;
        report)
            opts='--from --to --json -h --help'
            ;;
        *)
            opts="$sources --theme --no-mouse --list-themes --record
                  --record-max --filter --sort --group --view --list-views -V
                  --version"
            ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [[ -z $cmd ]] && ((COMP_CWORD == 1)); then
        COMPREPLY=($(compgen -W 'tui check watch end audit login logout serve
            configs tap cancel replay report' -- "$cur"))
    elif [[ $cmd == replay || $cmd == report ]]; then
        # The recording FILE.
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    elif [[ $cmd == login || $cmd == logout ]]; then
        # login NAME: the configured server names.
        mapfile -t fleet < <(_mcptop_fleet_args)
        _mcptop_add_lines < <("$bin" end "${fleet[@]}" --list-servers 2>/dev/null)
    fi
}

complete -F _mcptop mcptop
